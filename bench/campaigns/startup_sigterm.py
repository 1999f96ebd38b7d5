"""Start-up SIGTERM campaign (issue 37, campaign 4): relinkd stopped with
SIGTERM at a random moment of a long start-up, again and again, on one
store; it must exit cleanly and promptly and leave the store as it was.

  .venv/bin/python bench/campaigns/startup_sigterm.py [--stops 200] [--identifiers 1000] [--per-identifier 10]
                                                      [--seed N] [--relinkd PATH] [--json FILE]

The store is populated once by `relink-store-torture bench` (per identifier
a scan intent, and per peripheral a connection intent and a subscription:
`--identifiers` x `--per-identifier` intents; none of those peripherals is
on the bench, so each intent starts its strategies). On the simulated bench
(BlueZoo on a private bus), a first start measures the time to READY (the
systemd notification); then each round starts relinkd on the store the
previous round left, sends SIGTERM at a random moment between its spawn and
READY, and measures how long it takes to exit. Checked every round:

1. relinkd exits, with status 0, within `--bound` seconds (the time to exit
   is kept: its median, 90th percentile and worst are in the summary; the
   goal of issue 37 is 100 ms);
2. `PRAGMA integrity_check` is `ok` on a copy of the store;
3. the store holds what it held before the campaign: the same identifiers,
   and as many scan intents, connection intents, subscriptions and
   peripherals (start-up may append events, so the outbox is not compared).

Prints a line per violation and the summary; exits 1 on any violation.
The short version runs in the e2e tests (`test_startup_sigterm_campaign.py`).
"""

from __future__ import annotations

import argparse
import os
import random
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402,F401  (puts the bench's modules on the path)
from common import ROOT  # noqa: E402

from benchproc import BenchProcess  # noqa: E402
from common import commit, finish, integrity, store_copy  # noqa: E402

#: Peripheral rows are not compared: the scan intents may find the bench's own devices and keep them.
COUNTED = ("restore_identifier", "scan_intent", "connection_intent", "subscription")


def binary(name: str, given: Optional[str] = None) -> str:
    """`given`, else the release build, else the debug build."""
    for path in (given, os.path.join(ROOT, ".build", "release", name), os.path.join(ROOT, ".build", "debug", name)):
        if path and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"{name} is not built: swift build (or scripts/build-release.sh {name})")


def fingerprint(state: str) -> dict[str, Any]:
    """integrity_check and what the store holds, read from a copy."""
    with store_copy(state) as db:
        result: dict[str, Any] = {"integrity": integrity(db)}
        for table in COUNTED:
            result[table] = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        result["identifiers"] = sorted(r[0] for r in db.execute("SELECT id FROM restore_identifier"))
    return result


class Notify:
    """The service manager's side of sd_notify: every datagram read as it
    comes, as systemd does (an unread socket fills after ten messages and
    then blocks the sender), and the time of each READY=1."""

    def __init__(self, work: str):
        self.path = os.path.join(work, "notify")
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.ready = threading.Event()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while not self.closed:
            try:
                data = self.sock.recv(4096)
            except OSError:
                return
            if b"READY=1" in data.split(b"\n"):
                self.ready.set()

    def wait_ready(self, proc: subprocess.Popen, bound: float) -> float:
        t0 = time.monotonic()
        while not self.ready.wait(0.5):
            if proc.poll() is not None:
                raise RuntimeError(f"relinkd exited with {proc.returncode} before READY")
            if time.monotonic() - t0 > bound:
                raise RuntimeError(f"relinkd not ready within {bound} s")
        return time.monotonic() - t0

    def close(self) -> None:
        self.closed = True
        self.sock.close()


def exit_time(proc: subprocess.Popen, bound: float) -> Optional[float]:
    """When `proc` exited (time.monotonic()), waiting at most `bound`
    seconds; None when it is still running. Its pidfd wakes the wait at the
    exit itself: `Popen.wait(timeout)` polls with sleeps that grow to 50 ms,
    which put every time on its grid (15.5, 31.5, 63.5, 113.5 ... ms)."""
    fd = os.pidfd_open(proc.pid)
    try:
        readable, _, _ = select.select([fd], [], [], bound)
        return time.monotonic() if readable else None
    finally:
        os.close(fd)


def spawn(relinkd: str, bus: str, state: str, notify: Notify, log, log_level: str = "info") -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "WATCHDOG_PID", "STATE_DIRECTORY")}
    env["NOTIFY_SOCKET"] = notify.path
    return subprocess.Popen([relinkd, "--bus-address", bus, "--state-directory", state, "--log-destination", "stderr",
                             "--log-level", log_level], stdout=log, stderr=log, env=env)


def run(stops: int, identifiers: int, per_identifier: int, seed: int, relinkd_path: Optional[str] = None,
        bound: float = 30.0, log=print, log_level: str = "info", keep_log: Optional[str] = None,
        window: float = 1.0) -> dict[str, Any]:
    """Runs the campaign; returns the summary (see the module's text)."""
    relinkd = binary("relinkd", relinkd_path)
    torture = binary("relink-store-torture")
    rng = random.Random(seed)
    ran_on = commit()  # at the start: the checkout may move while a long run goes
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="relink-sigterm-campaign-")
    violations: list[str] = []
    exits: list[float] = []
    slowest: list[dict[str, float]] = []  # each stop: when in start-up the SIGTERM came, how long the exit took
    early = 0
    bench = BenchProcess()
    try:
        subprocess.run([torture, "bench", "--directory", work, "--identifiers", str(identifiers),
                        "--per-identifier", str(per_identifier), "--loads", "1", "--clients", "1", "--seconds", "0.2"],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
        state = os.path.join(work, "state")
        before = fingerprint(state)
        if before["integrity"] != ["ok"]:
            raise RuntimeError(f"the populated store fails integrity_check: {before['integrity'][:3]}")
        notify = Notify(work)
        with open(os.path.join(work, "relinkd.log"), "ab") as out:
            proc = spawn(relinkd, bench.bus, state, notify, out, log_level)
            try:
                ready = notify.wait_ready(proc, 300)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(60)
            for n in range(1, stops + 1):
                out.write(f"== stop {n}\n".encode())
                out.flush()
                proc = spawn(relinkd, bench.bus, state, notify, out, log_level)
                spawned = time.monotonic()
                # A sleep on purpose: the moment of the SIGTERM in start-up is what the campaign varies.
                time.sleep(rng.uniform(0, ready * window))
                if proc.poll() is not None:
                    violations.append(f"stop {n}: relinkd exited with {proc.returncode} before the SIGTERM")
                    continue
                proc.send_signal(signal.SIGTERM)
                sent = time.monotonic()
                exited = exit_time(proc, bound)
                if exited is None:
                    violations.append(f"stop {n}: relinkd still running {bound} s after SIGTERM "
                                      f"({sent - spawned:.3f} s into its start-up); killed")
                    proc.kill()
                    proc.wait(10)
                    continue
                status = proc.wait()
                exits.append(exited - sent)
                slowest.append({"stop": n, "sigterm_at_s": round(sent - spawned, 4), "exit_ms": round((exited - sent) * 1000, 1)})
                if sent - spawned >= ready:
                    early += 1
                if status not in (0, -signal.SIGTERM):  # -15: the SIGTERM came before relinkd's handler
                    violations.append(f"stop {n}: exit status {status} after SIGTERM {sent - spawned:.3f} s into start-up")
                after = fingerprint(state)
                if after["integrity"] != ["ok"]:
                    violations.append(f"stop {n}: integrity_check {after['integrity'][:3]}")
                changed = [k for k in (*COUNTED, "identifiers") if after[k] != before[k]]
                if changed:
                    violations.append(f"stop {n}: the store changed: " +
                                      ", ".join(f"{k} {before[k] if k != 'identifiers' else len(before[k])} -> "
                                                f"{after[k] if k != 'identifiers' else len(after[k])}" for k in changed))
                for v in violations[-3:]:
                    if v.startswith(f"stop {n}:"):
                        log(f"VIOLATION {v}")
                if n % 50 == 0:
                    log(f"start-up SIGTERM campaign: {n} stops, {len(violations)} violations")
        notify.close()
    finally:
        bench.stop()
        if keep_log:
            shutil.copyfile(os.path.join(work, "relinkd.log"), keep_log)
        shutil.rmtree(work, ignore_errors=True)
    exits_ms = sorted(e * 1000 for e in exits)
    return {
        "stops": stops, "violations": violations, "intents": identifiers * per_identifier,
        "ready_s": round(ready, 3),
        "exit_ms_median": round(statistics.median(exits_ms), 1) if exits_ms else None,
        "exit_ms_p90": round(exits_ms[int(0.9 * (len(exits_ms) - 1))], 1) if exits_ms else None,
        "exit_ms_max": round(exits_ms[-1], 1) if exits_ms else None,
        "slowest": sorted(slowest, key=lambda e: -e["exit_ms"])[:10],
        "after_ready": early, "seed": seed, "relinkd": relinkd,
        "commit": ran_on,
        "seconds": round(time.monotonic() - started, 1),
    }


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stops", type=int, default=200)
    p.add_argument("--identifiers", type=int, default=1000)
    p.add_argument("--per-identifier", type=int, default=10)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--relinkd", help="the relinkd binary (default: the release build, else the debug build)")
    p.add_argument("--bound", type=float, default=30.0, help="seconds relinkd may take to exit after SIGTERM")
    p.add_argument("--json", help="write the summary here")
    p.add_argument("--window", type=float, default=1.0,
                   help="SIGTERM within this many times the first start's time to READY (above 1: also just after READY)")
    p.add_argument("--log-level", default="info", help="relinkd's --log-level (debug: each step of start-up, timed)")
    p.add_argument("--keep-log", help="copy relinkd's output here (each stop starts with a line '== stop N')")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    return finish(run(args.stops, args.identifiers, args.per_identifier, seed, args.relinkd, args.bound,
                      log_level=args.log_level, keep_log=args.keep_log, window=args.window), args.json)


if __name__ == "__main__":
    sys.exit(main())
