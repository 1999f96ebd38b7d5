"""On the host: boot the real-BlueZ VM and run one command in it.

    bench/realbluez/run-vm [--controllers N] [--logdir DIR] [--timeout S]
                           [--kvm auto|on|off] [--no-bluetoothd] [--btmon] -- CMD...

Boots Debian's kernel (from scripts/setup-realbluez.sh's cache) with virtme-ng,
the host's / shared read-only (writes inside the guest are lost, except in
LOGDIR, a --rwdir), runs relinkbench.realbluez.guest as the guest's command,
prints a summary line and exits with the command's status (124 on timeout,
90 when the guest set-up failed)."""

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.normpath(os.path.join(HERE, "..", ".."))
REPO = os.path.dirname(BENCH)
CACHE = os.environ.get("RELINK_REALBLUEZ_CACHE", os.path.join(REPO, ".cache", "realbluez"))
SETUP = os.path.join(REPO, "scripts", "setup-realbluez.sh")
TIMEOUT_STATUS = 124
KVM_PROBE_TIMEOUT = 40.0


def setup() -> str:
    """Run the idempotent set-up; the path of the kernel image."""
    out = subprocess.run([SETUP], stdout=subprocess.PIPE, text=True, check=True)
    for line in out.stdout.splitlines():
        if line.startswith("kernel="):
            return line.split("=", 1)[1]
    raise RuntimeError("setup-realbluez.sh printed no kernel= line")


def vng_env() -> dict[str, str]:
    # vng runs virtme-run from its own venv: that bin must be on PATH.
    env = dict(os.environ)
    env["PATH"] = os.path.join(CACHE, "venv", "bin") + os.pathsep + env.get("PATH", "")
    return env


def vng_argv(kernel: str, kvm: bool, rwdirs: list[str], guest_cmd: str,
             memory: str, cpus: int) -> list[str]:
    argv = [os.path.join(CACHE, "venv", "bin", "vng")]
    if not kvm:
        argv.append("--disable-kvm")
    for d in rwdirs:
        argv += ["--rwdir", d]
    argv += ["--memory", memory, "--cpus", str(cpus), "--run", kernel, "--exec", guest_cmd]
    return argv


def run_bounded(argv: list[str], timeout: float, on_line=None, cwd: str = REPO) -> Optional[int]:
    """Run vng in its own process group, its output passed through; kill the
    whole group (qemu included) after `timeout`. None on timeout."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=vng_env(), cwd=cwd,
                            start_new_session=True)

    def pump():
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            if on_line is None or on_line(line):
                sys.stdout.write(line)
                sys.stdout.flush()
    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        status = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        status = None
    except BaseException:
        _kill_group(proc)
        raise
    if status is None:
        _kill_group(proc)
    reader.join(5)
    return status


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def kvm_works(kernel: str) -> bool:
    """Whether a guest boots under KVM here: tried once by booting it (a
    /dev/kvm that answers KVM_GET_API_VERSION may still hang or abort a
    guest), the answer cached per kernel and qemu."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout
    key = f"{os.path.basename(kernel)} {qemu.splitlines()[0] if qemu else '?'}"
    cache = os.path.join(CACHE, "kvm-probe.json")
    try:
        with open(cache) as f:
            known = json.load(f)
        if known.get("key") == key:
            return bool(known["works"])
    except (OSError, ValueError, KeyError):
        pass
    print(f"run-vm: probing KVM by booting (at most {KVM_PROBE_TIMEOUT:.0f} s, once)", file=sys.stderr)
    marker = "relink-kvm-probe-ok"
    lines: list[str] = []
    status = run_bounded(vng_argv(kernel, True, [], f"echo {marker}", "512M", 1),
                         KVM_PROBE_TIMEOUT, on_line=lambda l: lines.append(l.rstrip()) and False)
    works = status == 0 and any(marker in l for l in lines)
    with open(cache, "w") as f:
        json.dump({"key": key, "works": works, "status": status, "last_output": lines[-5:]}, f)
    print(f"run-vm: KVM {'works' if works else 'does not work'} (status {status})", file=sys.stderr)
    return works


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run-vm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--controllers", type=int, default=2, help="btvirt controllers (hci0 = central)")
    p.add_argument("--logdir", help="host directory for the guest's logs (default: a new temporary one)")
    p.add_argument("--timeout", type=float, default=600, help="seconds for the whole VM run")
    p.add_argument("--kvm", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--memory", default="1G")
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--no-bluetoothd", action="store_true")
    p.add_argument("--btmon", action="store_true")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    # qemu runs in its own session: a SIGTERM/SIGHUP to us must take it down
    # too (SystemExit unwinds through run_bounded, which kills the group).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))

    t0 = time.monotonic()
    kernel = setup()
    t_setup = time.monotonic() - t0
    kvm = {"on": True, "off": False}.get(args.kvm)
    if kvm is None:
        kvm = kvm_works(kernel)
    logdir = os.path.abspath(args.logdir or tempfile.mkdtemp(prefix="relink-realbluez-"))
    os.makedirs(logdir, exist_ok=True)
    for stale in ("ready.json", "guest-timings.json"):
        try:
            os.unlink(os.path.join(logdir, stale))
        except FileNotFoundError:
            pass

    python = os.path.join(REPO, ".venv", "bin", "python")
    if not os.path.exists(python):
        python = "/usr/bin/python3"
    guest = ["env", f"PYTHONPATH={BENCH}", "PYTHONDONTWRITEBYTECODE=1", python,
             "-m", "relinkbench.realbluez.guest", "--logdir", logdir,
             "--controllers", str(args.controllers)]
    if args.no_bluetoothd:
        guest.append("--no-bluetoothd")
    if args.btmon:
        guest.append("--btmon")
    guest += ["--"] + cmd
    vng = vng_argv(kernel, kvm, [logdir], shlex.join(guest), args.memory, args.cpus)

    # The host's clock for "boot to ready": when ready.json appears in LOGDIR.
    ready_at: list[float] = []
    stop = threading.Event()

    def watch_ready():
        path = os.path.join(logdir, "ready.json")
        while not stop.wait(0.1):
            if os.path.exists(path):
                ready_at.append(time.monotonic())
                return
    watcher = threading.Thread(target=watch_ready, daemon=True)
    t_boot = time.monotonic()
    watcher.start()
    status = run_bounded(vng, args.timeout)
    t_end = time.monotonic()
    stop.set()
    watcher.join()

    summary = {"status": TIMEOUT_STATUS if status is None else status, "kvm": kvm, "logdir": logdir,
               "setup_s": round(t_setup, 1), "total_s": round(t_end - t_boot, 1),
               "boot_to_ready_s": round(ready_at[0] - t_boot, 1) if ready_at else None}
    try:
        with open(os.path.join(logdir, "guest-timings.json")) as f:
            summary["guest_uptime"] = json.load(f)
    except (OSError, ValueError):
        pass
    if status is None:
        summary["error"] = f"timed out after {args.timeout:.0f} s"
    with open(os.path.join(logdir, "run-vm.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("run-vm: " + json.dumps(summary), file=sys.stderr)
    return summary["status"]


if __name__ == "__main__":
    sys.exit(main())
