"""Profile one relinkd start-up: perf record from spawn to READY.

  .venv/bin/python bench/relink/startup_profile.py --identifiers 1000 --out /tmp/prof
  perf report -i /tmp/prof/perf1000.data --no-children --stdio

Same store and bench as startup_bench.py (its `populate`); relinkd runs
under `perf record --call-graph fp` (Swift keeps frame pointers; use
`dwarf,16384` to see into libc) and is stopped once its READY line is
written. The population is kept in --out for the next run.
docs/startup-profile.md has what it showed.
"""
import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import restore_bench as rb  # noqa: E402
import startup_bench as sb  # noqa: E402


async def profile(identifiers: int, out: str, callgraph: str, relinkd: str, frequency: int = 499,
                  faults: bool = False) -> float:
    os.makedirs(out, exist_ok=True)
    population = os.path.join(out, f"population{identifiers}")
    if not os.path.exists(os.path.join(population, "state")):
        sb.populate(population, identifiers, 10)
    work = os.path.join(out, f"work{identifiers}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bench = rb.Bench(1, 20.0, work)
    await bench.start()
    try:
        state = os.path.join(work, "state")
        shutil.copytree(os.path.join(population, "state"), state)
        log_path = os.path.join(work, "relinkd.log")
        listener = sb.ReadyListener(work)
        with open(log_path, "wb") as log:
            t0 = time.monotonic()
            # With faults, every page fault is a sample: the first touch of
            # each page of code or data shows who touched it.
            sampling = ["-e", "page-faults", "-c", "1"] if faults else ["-F", str(frequency)]
            perf = subprocess.Popen(["perf", "record", *sampling, "--call-graph", callgraph,
                                     "-o", os.path.join(out, f"perf{identifiers}.data"), "--", relinkd,
                                     "--bus-address", bench.bus, "--state-directory", state,
                                     "--log-destination", "stderr"], stdout=log, stderr=log,
                                    env=listener.environment(), preexec_fn=rb.die_with_parent)
            ready = await listener.wait(perf, t0)
        with open(f"/proc/{perf.pid}/task/{perf.pid}/children") as f:
            os.kill(int(f.read().split()[0]), signal.SIGTERM)  # relinkd; perf writes its file when it exits
        perf.wait(60)
        return ready
    finally:
        await bench.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--identifiers", type=int, default=1000)
    p.add_argument("--out", required=True)
    p.add_argument("--callgraph", default="fp")
    p.add_argument("--relinkd", default=sb.RELINKD)
    p.add_argument("--frequency", type=int, default=499, help="samples a second (more for a closer look; slower)")
    p.add_argument("--faults", action="store_true",
                   help="sample every page fault instead of time: where resident memory was first touched")
    args = p.parse_args()
    ready = asyncio.run(profile(args.identifiers, args.out, args.callgraph, args.relinkd, args.frequency, args.faults))
    print(f"READY after {ready:.2f} s under perf; {os.path.join(args.out, f'perf{args.identifiers}.data')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
