"""benchctl: send one command to a running bench over DIR/control.sock.

  benchctl --dir DIR out_of_range lock
  benchctl --dir DIR set_rssi lock rssi=-40 noise=0
  benchctl --dir DIR status
Arguments KEY=VALUE are sent as JSON values when they parse as JSON (numbers,
true/false), else as strings; a bare word is the peripheral. Prints the reply;
exit status 1 when the bench answers ok=false, 2 when it cannot be reached.
"""

import argparse
import json
import os
import socket
import sys


def build(cmd: str, words: list[str]) -> dict:
    req: dict = {"id": 1, "cmd": cmd}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            try:
                req[k] = json.loads(v)
            except ValueError:
                req[k] = v
        else:
            req["peripheral"] = w
    return req


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="benchctl", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=os.environ.get("RELINK_BENCH_DIR"),
                   help="the bench directory (from the ready line; or $RELINK_BENCH_DIR)")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("cmd")
    p.add_argument("args", nargs="*")
    a = p.parse_args(argv)
    if not a.dir:
        p.error("--dir is required")
    req = build(a.cmd, a.args)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(a.timeout)
            s.connect(os.path.join(a.dir, "control.sock"))
            s.sendall((json.dumps(req) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
    except OSError as e:
        print(f"benchctl: cannot reach the bench in {a.dir}: {e}", file=sys.stderr)
        return 2
    try:
        reply = json.loads(buf)
    except ValueError:
        print(f"benchctl: bad reply {buf!r}", file=sys.stderr)
        return 2
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
