"""relinkd start-up with a large store: time from spawn to READY and the
resident memory after it, on the simulated bench.

  .venv/bin/python bench/relink/startup_bench.py [--identifiers 1000] [--per-identifier 10] [--runs 3]

The store is populated once by `relink-store-torture bench` (the store
benchmark's population: per identifier a scan intent, and per peripheral a
connection intent and a subscription; none of those peripherals exists on
the bench, so every intent starts its strategies and most end up scanning).
Each run copies that store, spawns the release relinkd on a fresh bench with
journald-style output to stderr, and waits for its "relinkd ready" line.
Build first: swift build -c release --product relinkd --product relink-store-torture.
"""
import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import restore_bench as rb  # noqa: E402

ROOT = rb.ROOT
RELINKD = os.path.join(ROOT, ".build", "release", "relinkd")
TORTURE = os.path.join(ROOT, ".build", "release", "relink-store-torture")


def populate(directory: str, identifiers: int, per_identifier: int) -> str:
    subprocess.run([TORTURE, "bench", "--directory", directory, "--identifiers", str(identifiers),
                    "--per-identifier", str(per_identifier), "--loads", "1", "--clients", "1", "--seconds", "0.2"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(directory, "state")


async def one_run(state: str, work: str, relinkd: str) -> tuple[float, int]:
    bench = rb.Bench(1, 20.0, work)
    await bench.start()
    proc = None
    try:
        run_state = os.path.join(work, "state")
        shutil.copytree(state, run_state)
        log_path = os.path.join(work, "relinkd.log")
        with open(log_path, "wb") as log:
            t0 = time.monotonic()
            proc = subprocess.Popen([relinkd, "--bus-address", bench.bus, "--state-directory", run_state,
                                     "--log-destination", "stderr"], stdout=log, stderr=log,
                                    preexec_fn=rb.die_with_parent)
            while True:
                await asyncio.sleep(0.05)
                with open(log_path, errors="replace") as f:
                    if "relinkd ready" in f.read():
                        ready = time.monotonic() - t0
                        break
                if proc.poll() is not None or time.monotonic() - t0 > 300:
                    raise RuntimeError(f"relinkd did not become ready (exit {proc.poll()}); log in {log_path}")
        await asyncio.sleep(1)
        with open(f"/proc/{proc.pid}/status") as f:
            rss = int(next(line for line in f if line.startswith("VmRSS:")).split()[1])
        return ready, rss
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        await bench.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--identifiers", type=int, default=1000)
    p.add_argument("--per-identifier", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--relinkd", default=RELINKD, help="the relinkd binary (e.g. an older build, to compare)")
    args = p.parse_args()
    for binary in (args.relinkd, TORTURE):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: swift build -c release --product relinkd --product relink-store-torture")
    top = tempfile.mkdtemp(prefix="relink-startup-", dir="/var/tmp")
    try:
        state = populate(os.path.join(top, "population"), args.identifiers, args.per_identifier)
        readies, rsss = [], []
        for n in range(args.runs):
            work = os.path.join(top, f"run{n}")
            os.makedirs(work)
            ready, rss = asyncio.run(one_run(state, work, args.relinkd))
            readies.append(ready)
            rsss.append(rss)
            print(f"run {n + 1}: ready after {ready:.2f} s, resident {rss / 1024:.0f} MiB", flush=True)
        print(f"{args.identifiers} identifiers, {args.identifiers * args.per_identifier} connection intents: "
              f"ready median {statistics.median(readies):.2f} s (min {min(readies):.2f}, max {max(readies):.2f}), "
              f"resident median {statistics.median(rsss) / 1024:.0f} MiB")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
