"""Status and shutdown at scale (issue 21, items 1 and 10): relinkd with
1,000 restore identifiers and 5,000 connection intents, all made through the
client API, on the simulated bench.

  .venv/bin/python bench/relink/scale_bench.py --relinkd NAME=PATH [--relinkd NAME=PATH ...]
      [--identifiers 1000] [--intents-per-identifier 5] [--reads 3] [--sigterm-at 0.1,0.5,3] [--work DIR]

Builds the state once, through the public API (Manager1.Register, then
Central1.Connect to a distinct absent address per intent, pending until
cancelled), with the first relinkd; then, for each relinkd given, on a copy
of that state directory:

  * ready: spawn -> READY=1 (the notify socket is this script's).
  * Status: one `Get(org.relink.Manager1, Status)` read, --reads times, each
    with a `relinkctl list` started 100 ms after the read was sent (its time
    to exit, and whether it failed: relinkctl gives up after 25 s) and
    every WATCHDOG=1 the run sent (WATCHDOG_USEC=2 s: a ping
    a second when the loop answers its liveness probe). Reported: the read's
    time, list's time, and the longest gap between watchdog pings from 2 s
    before the read until 2 s after its reply (no ping at all in that window:
    the whole window, marked >=).
  * SIGTERM: relinkd spawned on a fresh copy, SIGTERM at each of --sigterm-at
    (default 0.1, 0.5 and 3 s) after spawn, with WATCHDOG_USEC=20 s (as
    systemd/relinkd.service sets it) and without; the time from the signal
    to the exit, its status (-15: killed by the signal, which came before
    relinkd trapped it), and whether READY=1 came after STOPPING=1. Where
    in start-up a given time falls depends on the machine's load: see each
    build's `ready`.

The absent addresses make every intent run its strategies (a worst case:
a gateway has tens of links). Each relinkd is killed after its runs; every
process started here has PR_SET_PDEATHSIG=SIGKILL. Build first:
scripts/build-release.sh relinkd relinkctl.
"""

import argparse
import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import restore_bench as rb  # noqa: E402

ROOT = rb.ROOT
RELINKCTL = os.path.join(ROOT, ".build", "release", "relinkctl")
UNIT_WATCHDOG_USEC = "20000000"  # WatchdogSec=20s in systemd/relinkd.service
PROBE_WATCHDOG_USEC = "2000000"  # a ping a second: gaps resolved to about a second


class Failure(Exception):
    pass


class NotifySocket:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET; keeps
    (monotonic time, message) of everything relinkd sends."""

    def __init__(self, path: str):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.messages: list[tuple[float, str]] = []
        self.running = True
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while self.running:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            self.messages.append((time.monotonic(), data.decode(errors="replace")))

    def times(self, needle: str) -> list[float]:
        return [t for t, m in list(self.messages) if needle in m]

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.sock.close()
        os.unlink(self.path)


def spawn(binary: str, bus: str, state: str, log_path: str, env: dict) -> subprocess.Popen:
    log = open(log_path, "ab")
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "RELINK_CONTROL_INTERFACE")}
    environment.update(env)
    proc = subprocess.Popen([binary, "--bus-address", bus, "--state-directory", state,
                             "--log-destination", "stderr", "--log-level", "info"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=environment,
                            preexec_fn=rb.die_with_parent)
    log.close()
    return proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


async def wait_for(what: str, condition, timeout: float, poll: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(poll)


async def call(bus: MessageBus, path: str, interface: str, member: str, signature: str = "", body=None,
               timeout: float | None = None):
    message = Message(destination="org.relink", path=path, interface=interface, member=member,
                      signature=signature, body=body or [])
    reply = await (asyncio.wait_for(bus.call(message), timeout) if timeout else bus.call(message))
    if reply.message_type == MessageType.ERROR:
        raise Failure(f"{member}: {reply.error_name} {reply.body}")
    return reply.body


def absent_address(n: int) -> str:
    """The n-th address no bench peripheral has (the bench's are 00:00:00:00:00:xx)."""
    return "10:00:00:%02X:%02X:%02X" % ((n >> 16) & 0xFF, (n >> 8) & 0xFF, n & 0xFF)


async def build_state(binary: str, bench: rb.Bench, work: str, identifiers: int, per: int) -> tuple[str, float]:
    """The state made through the API; returns its directory and the time it took."""
    state = os.path.join(work, "template-state")
    notify = NotifySocket(os.path.join(work, "build-notify.sock"))
    proc = spawn(binary, bench.bus, state, os.path.join(work, "relinkd-build.log"), {"NOTIFY_SOCKET": notify.path})
    bus = await MessageBus(bus_address=bench.bus, bus_type=BusType.SYSTEM).connect()
    try:
        await wait_for("READY=1", lambda: notify.times("READY=1") or proc.poll() is not None, 120)
        t0 = time.monotonic()
        window = asyncio.Semaphore(32)  # calls in flight at once

        async def make(i: int) -> None:
            identifier = f"scale-{i:04d}"
            async with window:
                central, _ = await call(bus, "/org/relink", "org.relink.Manager1", "Register", "sa{sv}", [identifier, {}])
            for k in range(per):
                async with window:
                    await call(bus, central, "org.relink.Central1", "Connect", "sa{sv}",
                               [absent_address(i * per + k), {}])

        await asyncio.gather(*(make(i) for i in range(identifiers)))
        built = time.monotonic() - t0
    finally:
        await rb.quiet_disconnect(bus)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                stop(proc)
        notify.close()
    return state, built


def longest_gap(pings: list[float], start: float, end: float) -> tuple[float, bool]:
    """The longest time without a ping in [start, end]; True when it is the whole window."""
    inside = [t for t in pings if start <= t <= end]
    if not inside:
        return end - start, True
    points = [start] + inside + [end]
    return max(b - a for a, b in zip(points, points[1:])), False


async def status_runs(name: str, binary: str, bench: rb.Bench, template: str, work: str, reads: int) -> dict:
    state = os.path.join(work, f"state-{name}-status")
    shutil.copytree(template, state)
    notify = NotifySocket(os.path.join(work, f"notify-{name}.sock"))
    t0 = time.monotonic()
    proc = spawn(binary, bench.bus, state, os.path.join(work, f"relinkd-{name}-status.log"),
                 {"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": PROBE_WATCHDOG_USEC})
    bus = await MessageBus(bus_address=bench.bus, bus_type=BusType.SYSTEM).connect()
    result = {"reads": [], "lists": [], "gaps": []}
    try:
        await wait_for("READY=1", lambda: notify.times("READY=1") or proc.poll() is not None, 300)
        if proc.poll() is not None:
            raise Failure(f"{name} exited at start-up ({proc.returncode})")
        result["ready"] = notify.times("READY=1")[0] - t0
        await asyncio.sleep(2.5)  # pings before the first read, for the gap window
        for _ in range(reads):
            sent = time.monotonic()
            read = asyncio.create_task(call(bus, "/org/relink", "org.freedesktop.DBus.Properties", "Get", "ss",
                                            ["org.relink.Manager1", "Status"], timeout=300))
            await asyncio.sleep(0.1)
            list_start = time.monotonic()
            lister = await asyncio.create_subprocess_exec(RELINKCTL, "--bus-address", bench.bus, "list",
                                                          stdout=asyncio.subprocess.DEVNULL,
                                                          stderr=asyncio.subprocess.DEVNULL)
            await lister.wait()
            listed = time.monotonic() - list_start
            if lister.returncode != 0:
                result["list_failures"] = result.get("list_failures", 0) + 1
            (value,) = await read
            replied = time.monotonic()
            if '"identifiers"' not in value.value:
                raise Failure(f"Status is not the status document: {value.value[:200]}")
            await asyncio.sleep(2.2)  # the window's tail, and pings after it
            gap, whole = longest_gap(notify.times("WATCHDOG=1"), sent - 2, replied + 2)
            result["reads"].append(replied - sent)
            result["lists"].append(listed)
            result["gaps"].append((gap, whole))
    finally:
        await rb.quiet_disconnect(bus)
        stop(proc)
        notify.close()
    return result


async def sigterm_run(name: str, binary: str, bench: rb.Bench, template: str, work: str, at: float,
                      watchdog: bool) -> dict:
    tag = f"{name}-{at}-{'wd' if watchdog else 'nowd'}"
    state = os.path.join(work, f"state-{tag}")
    shutil.copytree(template, state)
    notify = NotifySocket(os.path.join(work, f"notify-{tag}.sock"))
    env = {"NOTIFY_SOCKET": notify.path}
    if watchdog:
        env["WATCHDOG_USEC"] = UNIT_WATCHDOG_USEC
    t0 = time.monotonic()
    proc = spawn(binary, bench.bus, state, os.path.join(work, f"relinkd-{tag}.log"), env)
    try:
        await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        await wait_for("exit", lambda: proc.poll() is not None, 180, poll=0.005)
        exited = time.monotonic()
        await asyncio.sleep(0.3)  # the last datagrams
        stopping, ready = notify.times("STOPPING=1"), notify.times("READY=1")
        return {"exit": exited - signalled, "status": proc.returncode,
                "ready_after_stopping": bool(stopping and any(t > stopping[0] for t in ready)),
                "stopping": (stopping[0] - t0) if stopping else None, "ready": [t - t0 for t in ready]}
    finally:
        stop(proc)
        notify.close()


def fmt(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


async def main_async(args) -> int:
    work = args.work or tempfile.mkdtemp(prefix="relink-scale-")
    os.makedirs(work, exist_ok=True)
    builds = []
    for spec in args.relinkd:
        name, _, path = spec.partition("=")
        if not path:
            name, path = os.path.basename(os.path.dirname(os.path.dirname(spec))) or spec, spec
        builds.append((name, path))
    bench = rb.Bench(1, 20.0, work)
    await bench.start()
    try:
        print(f"machine: {os.cpu_count()} cores, load average {' '.join(open('/proc/loadavg').read().split()[:3])}, "
              f"{time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}; work in {work}", flush=True)
        template, built = await build_state(builds[0][1], bench, work, args.identifiers, args.intents_per_identifier)
        print(f"state: {args.identifiers} identifiers, {args.identifiers * args.intents_per_identifier} intents "
              f"made through the API by {builds[0][0]} in {built:.1f} s", flush=True)
        rows = []
        for name, path in builds:
            s = await status_runs(name, path, bench, template, work, args.reads)
            print(f"{name}: ready {s['ready']:.2f} s; Status read {fmt(s['reads'])} s; relinkctl list during it "
                  f"{fmt(s['lists'])} s ({s.get('list_failures', 0)} failed); longest watchdog gap around it "
                  + ", ".join(f"{'>=' if whole else ''}{gap:.1f}" for gap, whole in s["gaps"]) + " s", flush=True)
            terms = {}
            for at in args.sigterm_at:
                for watchdog in (False, True):
                    r = await sigterm_run(name, path, bench, template, work, at, watchdog)
                    terms[(at, watchdog)] = r
                    print(f"{name}: SIGTERM at {at} s, {'WATCHDOG_USEC=20s' if watchdog else 'no watchdog'}: exit after "
                          f"{r['exit']:.3f} s (status {r['status']}); STOPPING at {r['stopping']}, READY at "
                          f"{[round(t, 3) for t in r['ready']]}; READY after STOPPING: {r['ready_after_stopping']}",
                          flush=True)
            rows.append((name, s, terms))
        print()
        print("| build | ready | Status read | list during it | longest watchdog gap | "
              + " | ".join(f"SIGTERM at {at:g} s (no wd / wd)" for at in args.sigterm_at) + " | READY after STOPPING |")
        print("|---|---:|---:|---:|---:|" + "---:|" * len(args.sigterm_at) + "---|")
        for name, s, t in rows:
            gaps = max(s["gaps"])
            late = sum(r["ready_after_stopping"] for r in t.values())
            exits = " | ".join(f"{t[(at, False)]['exit']:.2f} / {t[(at, True)]['exit']:.2f} s" for at in args.sigterm_at)
            print(f"| {name} | {s['ready']:.2f} s | {fmt(s['reads'])} s | {fmt(s['lists'])} s "
                  f"({s.get('list_failures', 0)} of {len(s['lists'])} failed) | "
                  f"{'>=' if gaps[1] else ''}{gaps[0]:.1f} s | {exits} | {late} of {len(t)} |")
        print(f"machine after: load average {' '.join(open('/proc/loadavg').read().split()[:3])}")
        return 0
    finally:
        await bench.stop()
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--relinkd", action="append", required=True,
                   help="NAME=PATH of a relinkd build (repeat to compare; the first builds the state)")
    p.add_argument("--identifiers", type=int, default=1000)
    p.add_argument("--intents-per-identifier", type=int, default=5)
    p.add_argument("--reads", type=int, default=3)
    p.add_argument("--sigterm-at", type=lambda text: [float(x) for x in text.split(",")], default=[0.1, 0.5, 3.0],
                   help="seconds after spawn to send SIGTERM, comma-separated")
    p.add_argument("--work", help="work directory (kept); default a temporary one, removed")
    p.add_argument("--keep", action="store_true", help="keep the temporary work directory (logs)")
    args = p.parse_args()
    try:
        return asyncio.run(main_async(args))
    except Failure as e:
        print(f"failed: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
