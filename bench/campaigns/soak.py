"""Fault soak (issue 37, campaign 3): random faults of every kind the
simulated bench can play, mixed, for minutes, while the kill campaign's
clients change relinkd's state and the band streams; the links checked
after every fault, resources sampled every minute.

  .venv/bin/python bench/campaigns/soak.py [--minutes 30] [--seed N] [--relinkd PATH] [--json FILE]

The identifiers, the churn and the model are the kill campaign's
(`kill.py`): `kc-band` streams the band's heart rate and acknowledges it,
`kc-churn` scans, connects, subscribes, cancels and acknowledges without
pause. Between faults the churn runs for 0.5 to 3 s. Then one fault, at
random:

* `relinkd-kill`: relinkd SIGKILLed and started again; every check of the
  kill campaign (the store's integrity, acknowledged changes restored,
  nothing acknowledged delivered again, nothing stored lost);
* `bluetoothd-kill`, `bluetoothd-term`: bluetoothd (BlueZoo) restarted with
  SIGKILL or SIGTERM;
* `power-cycle`: relinkd's adapter powered off for 0.2 to 2 s and on;
* `band-away`: the band's process killed (it stops advertising, its link
  drops) and started again 0.5 to 5 s later;
* `client-death`: the band's client leaves the bus and comes back
  (`Register` with replay): nothing acknowledged comes again, its stored
  unacknowledged events do;
* `disk-full`: the store's file system (a 32 MiB tmpfs the soak mounts for
  relinkd's state directory) filled to the last byte for half to all of
  `--full-seconds` (60), while the churn goes on, then freed. A call that
  needs a commit may be refused with `org.relink.Error.StoreFailed`, and a
  refused call must change nothing (the model is not moved; a later kill's
  checks compare the store with it); a StoreFailed with room on the disk is
  a violation. The band's values past what relinkd can hold unstored are
  counted as dropped, never delivered under a number used again. Played
  only where the soak may mount (root with CAP_SYS_ADMIN); the summary
  says when it was not.

Every kind comes once in each round of faults, in a random order. After each
fault the band's values must come back (a value numbered above every one
seen before the fault) within `--bound` seconds of the fault's end
(relinkd killed, bluetoothd restarted, the adapter on again, the band
started, the client gone); the time is kept per kind. Throughout: no event number names two events, no
acknowledged event is stored again. Every minute relinkd's resident
memory, open descriptors, threads and the store's size on disk are
sampled (the summary gives each with its slope per minute); descriptors
and threads must stay within a few of the first sample's.

Not played on the mock: address rotations (the churn's lock keeps its
address). The long run goes to docs/reliability.md; a
2-minute version runs in CI (`bench/e2e/tests/test_soak_campaign.py`).
"""

from __future__ import annotations

import argparse
import copy
import errno
import os
import subprocess
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402,F401  (puts the bench's modules on the path)

import e2e_harness  # noqa: E402
from benchproc import BenchProcess  # noqa: E402
from common import commit, finish, process_figures, slope  # noqa: E402
from e2e_harness import Caller, DBusCallError, Relinkd  # noqa: E402
from kill import BAND_ID, CHURN_ID, Campaign, Figures, Uncertain  # noqa: E402
from relinkbench.waiting import WaitTimeout, wait_until  # noqa: E402

FAULTS = ("relinkd-kill", "bluetoothd-kill", "bluetoothd-term", "power-cycle", "band-away", "client-death", "disk-full")
STORE_FAILED = "org.relink.Error.StoreFailed"
#: The band's notifications per second, and while the disk is full.
BAND_RATE, BURST_RATE = 2.0, 50.0
#: The tmpfs for relinkd's state directory, where `disk-full` is played.
STATE_FS_SIZE = "32m"
#: How many more descriptors and threads than at the first sample count as growth.
FD_SLACK, THREAD_SLACK = 8, 4


class Soak(Campaign):
    def __init__(self, bench: BenchProcess, relinkd: Relinkd, rng: random.Random, bound: float, log=print,
                 kinds: tuple[str, ...] = FAULTS, full_seconds: float = 60.0):
        super().__init__(bench.bus, relinkd, rng, bound, log)
        self.bench = bench
        self.kinds = kinds
        self.full_seconds = full_seconds
        self.faults: dict[str, list[float]] = {name: [] for name in kinds}
        self.samples: list[dict[str, Any]] = []
        self.disk_full = False
        self.refused = 0  # calls refused with StoreFailed while the disk was full
        self.full_for: list[float] = []

    def churn_for(self, seconds: float) -> None:
        """The kill campaign's churn, for a while (relinkd stays up). On a
        full disk a call may be refused (StoreFailed): the model goes back
        to what it was before the call, and no Unregister is played (its
        Register anew could be refused, leaving the identifier away)."""
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            before = copy.deepcopy(self.model), dict(self.stored_unacked)
            try:
                self.churn_once(unregister=not self.disk_full)
            except Uncertain as e:
                self.violation(f"a call got no answer while nothing was faulted: {e}")
                return
            except DBusCallError as e:
                if e.name != STORE_FAILED:
                    raise
                if not self.disk_full:
                    self.violation(f"a call refused with {e.name} with room on the disk: {e}")
                    return
                self.model, self.stored_unacked = before
                self.refused += 1

    def fill_disk(self) -> str:
        """Fills the state directory's file system to the last byte."""
        path = os.path.join(self.relinkd.state_dir, "soak-filler")
        with open(path, "wb", buffering=0) as f:
            for size in (1 << 20, 1 << 16, 4096, 512, 1):
                block = b"\xa5" * size
                try:
                    while True:
                        f.write(block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
        return path

    def fault(self, name: str) -> None:
        self.drain_signals()
        before = self.highest_value
        if name == "relinkd-kill":
            self.relinkd.kill9()
            ended = time.monotonic()
            self.figures.kills += 1
            self.drain_signals()
            self.check_store_file()
            highest = dict(self.highest)
            self.relinkd.start()
            self.check_restored(highest)
        elif name in ("bluetoothd-kill", "bluetoothd-term"):
            self.bench.cmd("restart_bluez", signal="KILL" if name.endswith("kill") else "TERM")
            ended = time.monotonic()
        elif name == "power-cycle":
            self.bench.cmd("power_cycle_central", off_seconds=round(self.rng.uniform(0.2, 2.0), 2))
            ended = time.monotonic()
        elif name == "band-away":
            self.bench.cmd("kill_peripheral", peripheral="band")
            time.sleep(self.rng.uniform(0.5, 5.0))  # the fault itself: the band away for a while
            self.bench.cmd("start_peripheral", peripheral="band")
            ended = time.monotonic()
        elif name == "disk-full":
            filler = self.fill_disk()
            self.disk_full = True
            full_for = self.rng.uniform(0.5, 1.0) * self.full_seconds
            # The band streams fast meanwhile: at its usual 2 values a second
            # the store's pages freed by Acks take every new row, and a full
            # disk changes nothing.
            self.bench.cmd("set_rate", peripheral="band", rate=BURST_RATE)
            try:
                self.churn_for(full_for)
            finally:
                os.unlink(filler)
                self.disk_full = False
                self.bench.cmd("set_rate", peripheral="band", rate=BAND_RATE)
            self.full_for.append(full_for)
            ended = time.monotonic()
            self.drain_signals()
            before = self.highest_value  # values came live while the disk was full: one must come after
        else:  # client-death
            self.callers[BAND_ID].close()
            ended = time.monotonic()
            self.callers[BAND_ID] = Caller(self.bus)
            self.read[BAND_ID] = 0
            restored = self.register(BAND_ID)
            if int(restored["acknowledged"]) < self.model.acked[BAND_ID]:
                self.violation(f"{BAND_ID}: acknowledged {restored['acknowledged']} after its client came back, "
                               f"below the Ack through {self.model.acked[BAND_ID]}")
        self.check_not_stored_again()
        try:
            wait_until(lambda: (self.drain_signals(), self.highest_value > before)[1], self.bound,
                       f"a band value after {name}", 0.02)
        except WaitTimeout:
            self.violation(f"{name}: no value from the band within {self.bound} s")
            return
        self.faults[name].append(time.monotonic() - ended)

    def check_not_stored_again(self) -> None:
        for identifier in (BAND_ID, CHURN_ID):
            try:
                numbers = [s for s, _, _ in self.read_store(identifier)]
            except Uncertain:
                continue
            early = [s for s in numbers if s <= self.model.acked[identifier]]
            if early:
                self.violation(f"{identifier}: acknowledged events stored again: {early[:10]}")

    def sample(self, minute: float) -> None:
        pid = self.relinkd.proc.pid
        store = sum(os.path.getsize(os.path.join(self.relinkd.state_dir, n)) for n in os.listdir(self.relinkd.state_dir)
                    if n.startswith("relink.sqlite"))
        self.samples.append({"minute": round(minute, 2), "pid": pid, **process_figures(pid), "store_kib": store // 1024})
        first = self.samples[0]
        last = self.samples[-1]
        if last["fds"] > first["fds"] + FD_SLACK:
            self.violation(f"relinkd holds {last['fds']} descriptors, {first['fds']} at the first sample")
        if last["threads"] > first["threads"] + THREAD_SLACK:
            self.violation(f"relinkd runs {last['threads']} threads, {first['threads']} at the first sample")


def per_minute(samples: list[dict[str, Any]], key: str) -> Optional[float]:
    """The slope of `key` per minute over the samples, rounded."""
    s = slope([x["minute"] for x in samples], [x[key] for x in samples])
    return None if s is None else round(s, 1)


def may_mount() -> bool:
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        return False
    with open("/proc/self/status") as f:
        caps = next((line.split()[1] for line in f if line.startswith("CapEff:")), "0")
    return bool(int(caps, 16) & (1 << 21))


def run(minutes: float, seed: int, relinkd_path: Optional[str] = None, bound: float = 30.0, log=print,
        full_seconds: float = 60.0) -> dict[str, Any]:
    """Runs the soak; returns the summary (see the module's text)."""
    if relinkd_path:
        e2e_harness.RELINKD = relinkd_path
    rng = random.Random(seed)
    ran_on = commit()
    started = time.monotonic()
    bench = BenchProcess("--lock", "lock", "--band", "band")
    workdir = tempfile.mkdtemp(prefix="relink-soak-")
    state = os.path.join(workdir, "state")
    os.makedirs(state)
    mounted = may_mount() and subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={STATE_FS_SIZE}", "tmpfs", state]).returncode == 0
    kinds = FAULTS if mounted else tuple(k for k in FAULTS if k != "disk-full")
    relinkd = Relinkd(bench.bus, state, os.path.join(workdir, "relinkd.log"))
    soak: Optional[Soak] = None
    try:
        relinkd.start()
        soak = Soak(bench, relinkd, rng, bound, log, kinds, full_seconds)
        soak.set_up()
        soak.sample(0.0)
        begun = time.monotonic()
        next_sample = begun + 60
        order: list[str] = []
        while time.monotonic() - begun < minutes * 60:
            if not order:  # every kind once in each round, in a random order
                order = list(kinds)
                rng.shuffle(order)
            soak.churn_for(rng.uniform(0.5, 3.0))
            soak.fault(order.pop())
            if time.monotonic() >= next_sample:
                soak.sample((time.monotonic() - begun) / 60)
                next_sample += 60
        soak.sample((time.monotonic() - begun) / 60)
    finally:
        figures = soak.figures if soak else Figures()
        if soak:
            soak.close()
        log_tail = relinkd.log_tail(60) if figures.violations else ""
        relinkd.kill9()
        bench.stop()
        if mounted:
            subprocess.run(["umount", state])
        shutil.rmtree(workdir, ignore_errors=True)
    faults = soak.faults if soak else {}
    samples = soak.samples if soak else []
    summary = {
        "minutes": minutes, "violations": figures.violations,
        "faults": {name: len(times) for name, times in faults.items()},
        "recovery_median_s": {name: round(statistics.median(t), 3) for name, t in faults.items() if t},
        "recovery_max_s": {name: round(max(t), 3) for name, t in faults.items() if t},
        "not_played": [] if mounted else ["disk-full: cannot mount a tmpfs (root with CAP_SYS_ADMIN only)"],
        "disk_full_s": round(sum(soak.full_for), 1) if soak else 0, "calls_refused_store_full": soak.refused if soak else 0,
        "bound_s": bound, "calls_acknowledged": figures.calls_acknowledged, "identifiers_forgotten": figures.forgotten,
        "events_seen": figures.events_seen, "values_seen": figures.values_seen, "samples": samples,
        "slopes_per_minute": {key: per_minute(samples, key) for key in ("rss_kib", "fds", "threads", "store_kib")},
        "seed": seed, "commit": ran_on, "seconds": round(time.monotonic() - started, 1), "relinkd": e2e_harness.RELINKD,
    }
    if log_tail:
        log("relinkd's log, last lines:\n" + log_tail)
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=None, help="the random seed (default: from the clock, printed)")
    p.add_argument("--relinkd", help="the relinkd binary (default: the debug build, or $RELINKD)")
    p.add_argument("--bound", type=float, default=30.0, help="seconds for the band's values to come back after a fault")
    p.add_argument("--full-seconds", type=float, default=60.0, help="a disk-full fault lasts half to all of this")
    p.add_argument("--json", help="write the summary here")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"fault soak: seed {seed}")
    return finish(run(args.minutes, seed, args.relinkd, args.bound, full_seconds=args.full_seconds), args.json)


if __name__ == "__main__":
    sys.exit(main())
