"""Helpers for tests that run inside the real-BlueZ VM (run-vm sets
RELINK_REALBLUEZ_GUEST=1): relinkd as the relink user on the guest's system
bus, relinkctl, a bounded wait, and a record of what relinkd did wrong.

A booted gateway image runs them too (bench/gateway/tests/test_survival.py):
RELINK_RELINKD and RELINK_RELINKCTL name the installed binaries and
RELINK_REALBLUEZ_BACKEND=gateway makes the bench drive the system's own
bluetooth.service instead of a bluetoothd of its own."""

import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench", "tests"))
sys.path.insert(0, os.path.join(REPO, "bench"))
from benchproc import BenchProcess  # noqa: E402
from relinkbench.waiting import wait_until as wait_for  # noqa: E402  (the guest tests' name for it)

BUILD = os.environ.get("RELINK_BUILD_DIR", os.path.join(REPO, ".build", "debug"))
RELINKD = os.environ.get("RELINK_RELINKD") or os.path.join(BUILD, "relinkd")
RELINKCTL = os.environ.get("RELINK_RELINKCTL") or os.path.join(BUILD, "relinkctl")
BACKEND = os.environ.get("RELINK_REALBLUEZ_BACKEND") or "bluez"
LOGDIR = os.environ.get("RELINK_REALBLUEZ_LOGDIR") or tempfile.mkdtemp(prefix="relink-real-")
IN_GUEST = os.environ.get("RELINK_REALBLUEZ_GUEST") == "1"

HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def start_bench(*args: str) -> BenchProcess:
    """run-bench --backend bluez (or BACKEND). Its directory stays in the
    guest's /tmp (its control socket cannot live on LOGDIR's 9p share);
    stop_bench copies the logs."""
    return BenchProcess("--backend", BACKEND, "--keep-dir", *args, timeout=150 if BACKEND == "gateway" else 90)


def stop_bench(bench: BenchProcess) -> None:
    bench.stop()
    dest = os.path.join(LOGDIR, "bench")
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(bench.dir):
        if name.endswith(".log"):
            shutil.copy(os.path.join(bench.dir, name), dest)
    shutil.rmtree(bench.dir, ignore_errors=True)


class Relinkd:
    """relinkd on hci0 as the user relink, with a private state directory;
    its stderr (debug) appended to LOGDIR/relinkd.log across restarts."""

    def __init__(self):
        self.state = tempfile.mkdtemp(prefix="relinkd-state-")
        shutil.chown(self.state, "relink", "relink")
        self.log_path = os.path.join(LOGDIR, "relinkd.log")
        self.proc: Optional[subprocess.Popen] = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.log_path, "ab")
        log.write(f"=== relinkd start #{self.starts} at {time.time():.3f}\n".encode())
        log.flush()
        self.proc = subprocess.Popen(
            ["setpriv", "--reuid=relink", "--regid=relink", "--clear-groups", RELINKD,
             "--state-directory", self.state, "--adapter", "hci0",
             "--log-destination", "stderr", "--log-level", "debug"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        # 90 s: under TCG on a loaded host the 50 MB debug binary, read over
        # 9p, took up to 38.6 s from exec to its first log line (peripheral
        # restart matrix, run 2); relinkd itself is on the bus 2-4 s later.
        wait_for(lambda: ctl("status")[0] == 0 or self.proc.poll() is not None, 90, "relinkd on the bus")
        assert self.proc.poll() is None, f"relinkd exited with {self.proc.returncode}"

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(15)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()


def play_restart(kind: str, relinkd: Relinkd, bench: BenchProcess) -> None:
    """One restart of the restart-survival suites: relinkd SIGKILL or
    SIGTERM (then started again), bluetoothd SIGKILL or SIGTERM restarts
    (the bench's restart_bluez), hci0 (relinkd's adapter) powered off for
    1 s, or "reboot": relinkd SIGTERM, bluetoothd SIGTERM and started
    again, then relinkd started on the same state directory."""
    if kind == "relinkd_kill":
        relinkd.signal(signal.SIGKILL)
        relinkd.start()
    elif kind == "relinkd_term":
        relinkd.signal(signal.SIGTERM)
        assert relinkd.proc.returncode == 0, f"relinkd exited {relinkd.proc.returncode} on SIGTERM"
        relinkd.start()
    elif kind == "bluetoothd_kill":
        bench.cmd("restart_bluez", signal="KILL", timeout=90)
    elif kind == "bluetoothd_term":
        bench.cmd("restart_bluez", signal="TERM", timeout=90)
    elif kind in ("central_power_cycle", "power_cycle"):
        bench.cmd("power_cycle_central", off_seconds=1.0)
    elif kind == "reboot":
        relinkd.signal(signal.SIGTERM)
        bench.cmd("restart_bluez", signal="TERM", timeout=90)
        relinkd.start()
    else:
        raise ValueError(kind)


def recover_bluetoothd(bench: BenchProcess, crashes: list[dict], when: str) -> bool:
    """bluetoothd 5.66 can crash (docs/real-bluez.md, difference 19).
    Debian's bluetooth.service does not restart it (`#Restart=on-failure`);
    the bench starts it again, as such a unit would, and `crashes` records
    it. True when it had to."""
    daemon = bench.try_cmd("status").get("bluetoothd") or {}
    if daemon.get("running", True):
        return False
    crashes.append({"when": when, "returncode": daemon.get("returncode")})
    bench.cmd("restart_bluez", timeout=90)
    return True


def ctl(*args: str, timeout: float = 30) -> tuple[int, str, str]:
    out = subprocess.run([RELINKCTL, *args], capture_output=True, text=True, timeout=timeout)
    return out.returncode, out.stdout, out.stderr


def ctl_ok(*args: str) -> str:
    status, out, err = ctl(*args)
    assert status == 0, f"relinkctl {' '.join(args)}: exit {status}: {err.strip()}"
    return out


def events(identifier: str) -> list[dict]:
    return json.loads(ctl_ok("--json", "events", identifier)).get("events", [])


def band_counters(evs: list[dict], after: int = 0) -> list[int]:
    """The band's counters (bytes 2..5, little endian) of value-notified events after `after`."""
    out = []
    for e in evs:
        if e.get("kind") != "value-notified" or e.get("sequence", 0) <= after:
            continue
        value = ((e.get("payload") or {}).get("valueNotified") or {}).get("value") or []
        if len(value) >= 6:
            out.append(int.from_bytes(bytes(value[2:6]), "little"))
    return out


def last_sequence(identifier: str) -> int:
    return max((e.get("sequence", 0) for e in events(identifier)), default=0)


def connection_state(identifier: str) -> str:
    """relinkctl status --json as text, for failure messages and findings."""
    return ctl("--json", "status")[1]


def lock_world(figures_file: str, figures: Optional[dict] = None, lock_args: tuple[str, ...] = ()):
    """A guest test's world, as a fixture's body (`yield from`): the bench
    with the lock (`lock_args`: more run-bench options, e.g. its security)
    and a relinkd (not started yet), with the dict a test puts its figures
    in; afterwards both are stopped and the figures written to
    LOGDIR/`figures_file` and printed."""
    figures = {} if figures is None else figures
    bench = start_bench("--lock", "lock", *lock_args)
    relinkd = Relinkd()
    yield bench, relinkd, figures
    relinkd.stop()
    stop_bench(bench)
    with open(os.path.join(LOGDIR, figures_file), "w") as f:
        json.dump(figures, f, indent=1)
    print("figures:", json.dumps(figures))


class Results:
    """A matrix's per-case results and timings, in a JSON file rewritten
    after every case (so a run cut short still leaves what it found)."""

    def __init__(self, path: str):
        self.path = path
        self.doc = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "bluetoothd": f"Debian bluez {bluez_version()} ({BACKEND} backend, btvirt controllers, TCG VM)",
                    "cases": []}

    def add(self, case: dict) -> None:
        self.doc["cases"].append(case)
        with open(self.path, "w") as f:
            json.dump(self.doc, f, indent=1)


def kernel_connections(index: int = 0) -> str:
    """The kernel's connections of hci`index` as `btmgmt con` lists them
    (run under `script`: btmgmt prints nothing without a terminal), or why
    not."""
    try:
        out = subprocess.run(["script", "-qc", f"btmgmt --index {index} con", "/dev/null"],
                             capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(btmgmt con failed: {e})"
    return " | ".join(l.strip() for l in out.stdout.replace("\r", "").splitlines() if l.strip())[:600]


def bluez_version() -> str:
    """The guest's bluez package version (dpkg), or "unknown"."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "bluez"], capture_output=True, text=True,
                             timeout=10)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


class Findings:
    """What relinkd did wrong on real bluetoothd, with log evidence:
    LOGDIR/findings.json (a list of {finding, seen, evidence})."""

    def __init__(self):
        self.path = os.path.join(LOGDIR, "findings.json")
        self.items: list[dict] = []

    def record(self, finding: str, seen: str, log: str, patterns: list[str], limit: int = 6,
               bluetoothd_patterns: tuple[str, ...] = ()) -> None:
        evidence = [line for line in log.splitlines()
                    if any(re.search(p, line) for p in patterns)][:limit]
        if bluetoothd_patterns:
            evidence += [f"bluetoothd: {line}" for line in bluetoothd_log().splitlines()
                         if any(re.search(p, line) for p in bluetoothd_patterns)][:limit]
        self.items.append({"finding": finding, "seen": seen, "evidence": evidence})
        with open(self.path, "w") as f:
            json.dump(self.items, f, indent=1)
        print(f"FINDING {finding}: {seen}", file=sys.stderr)
        for line in evidence:
            print(f"    {line}", file=sys.stderr)


def forget_device(adapter: str, address: str) -> None:
    """`adapter` (hci0, ...) forgets the device `address`, its bond too
    (Adapter1.RemoveDevice), if it knows it: a test that counts pairings
    starts with none. The VM's bench empties bluetoothd's storage at each
    start; a gateway keeps its bonds, as a real one does."""
    path = f"/org/bluez/{adapter}/dev_{address.upper().replace(':', '_')}"
    subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.bluez", f"/org/bluez/{adapter}",
                    "org.bluez.Adapter1.RemoveDevice", f"objpath:{path}"], capture_output=True, timeout=10)


def bluez_get(path: str, interface: str, prop: str) -> Optional[str]:
    """A property of org.bluez as dbus-send prints it (last word), or None."""
    out = subprocess.run(["dbus-send", "--system", "--print-reply=literal", "--dest=org.bluez", path,
                          "org.freedesktop.DBus.Properties.Get", f"string:{interface}",
                          f"string:{prop}"], capture_output=True, text=True, timeout=10)
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def bluetoothd_log() -> str:
    """bluetoothd's log so far: the bench's bluetoothd's file in the VM,
    bluetooth.service's journal of this boot in a gateway (its debug lines
    when the test asked for them: RELINK_BLUETOOTHD_DEBUG=1)."""
    if BACKEND == "gateway":
        out = subprocess.run(["journalctl", "-b", "-u", "bluetooth.service", "-o", "cat", "--no-pager"],
                             capture_output=True, text=True, errors="replace", timeout=60)
        return out.stdout
    try:
        with open(os.path.join(LOGDIR, "bluetoothd.log"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class HeldDiscovery:
    """Another program holding an unfiltered LE discovery on hci0 (what made
    relinkd see btvirt's devices despite its RSSI filter, issue #20 finding 6)."""

    SCRIPT = r"""
import asyncio, sys
from dbus_fast import BusType, Message, Variant
from dbus_fast.aio import MessageBus
async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    for member, sig, body in (("SetDiscoveryFilter", "a{sv}", [{"Transport": Variant("s", "le")}]),
                              ("StartDiscovery", "", [])):
        r = await bus.call(Message(destination="org.bluez", path="/org/bluez/hci0",
                                   interface="org.bluez.Adapter1", member=member, signature=sig, body=body))
        print(member, r.message_type.name, r.body, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
asyncio.run(main())
"""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", self.SCRIPT], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        line += self.proc.stdout.readline()
        assert "StartDiscovery METHOD_RETURN" in line, f"helper discovery failed: {line!r}"

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
