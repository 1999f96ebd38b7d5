"""A program of relinkd's peripheral role, run by a guest test as an
ordinary Unix user (issue 39: not root, not relink), as a gateway's program
runs as its own user on the system bus with the shipped D-Bus policy.

It registers IDENTIFIER (argv[1]) with relinkd, publishes the hub's service
and advertises it (bench/e2e/tests/pbench_fixtures.py), then answers one
JSON command per stdin line with one JSON line on stdout:
  {"cmd": "wait_event", "kind": K, "after": N, "timeout": S} -> {"event": K, "sequence": N, "payload": {...}}
  {"cmd": "update", "hex": H}                                -> {"updated": true}  (the hub's stream characteristic)
  {"cmd": "ack"}                                             -> {"acked": true}
  {"cmd": "quit"}                                            -> exits
A failed call answers {"error": "..."} (a refusal by the bus or relinkd,
e.g. AccessDenied, is thus the test's to report)."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
for sub in ("bench", os.path.join("bench", "tests"), os.path.join("bench", "e2e", "tests")):
    sys.path.insert(0, os.path.join(REPO, sub))
from pbench_fixtures import HUB_ADVERTISEMENT, HUB_SERVICE, SERVICE, STREAM  # noqa: E402
from remote_central import PeripheralProgram  # noqa: E402

BUS = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/run/dbus/system_bus_socket")


def say(**fields) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    identifier = sys.argv[1]
    try:
        program = PeripheralProgram(BUS, identifier)
        program.publish(HUB_SERVICE)
        program.advertise(HUB_ADVERTISEMENT)
    except Exception as e:  # noqa: BLE001 (reported to the test, which fails on it)
        say(error=f"{type(e).__name__}: {e}", uid=os.getuid())
        return
    say(published=True, uid=os.getuid(), restored_keys=sorted(program.restored))
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd["cmd"] == "wait_event":
                seq, kind, payload = program.wait_event(cmd["kind"], timeout=cmd.get("timeout", 30), after=cmd.get("after", 0))
                say(event=kind, sequence=seq, payload=payload)
            elif cmd["cmd"] == "update":
                program.update(SERVICE, STREAM, bytes.fromhex(cmd["hex"]))
                say(updated=True)
            elif cmd["cmd"] == "ack":
                program.ack_all()
                say(acked=True)
            elif cmd["cmd"] == "quit":
                break
        except Exception as e:  # noqa: BLE001
            say(error=f"{type(e).__name__}: {e}")
    program.close()


if __name__ == "__main__":
    main()
