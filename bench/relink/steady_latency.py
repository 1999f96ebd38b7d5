"""Steady-state notification latency, link up: a probe pushed every 30 ms,
time from the push to its arrival at the client, for relinkd (Central1.Event
signal) and for the bleak peer (its notify callback), on one bench.

  .venv/bin/python bench/relink/steady_latency.py [--samples 60] [relinkd bleak ...]

Each argument is one run (a fresh contender on a fresh bench); give both
twice to see the spread. Build the release relinkd first (bench/relink/run.sh does).
"""
import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import restore_bench as rb  # noqa: E402

RELINKD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".build", "release", "relinkd")


async def run(kind: str, samples: int) -> None:
    work = tempfile.mkdtemp(prefix="relink-steady-")
    bench = rb.Bench(1, 20.0, work)
    await bench.start()
    c = rb.Relinkd(bench, work, RELINKD, 5, "signal") if kind == "relinkd" else rb.BleakPeer(bench, work)
    try:
        await c.setup([0])
        await rb.Prober(bench, 20).until_all(c, [0], 60)
        latencies = []
        for _ in range(samples):
            while not c.arrivals.values.empty():
                c.arrivals.values.get_nowait()
            rb.Prober.seq += 1
            seq = rb.Prober.seq
            t0 = time.monotonic()
            await bench.push(0, seq)
            while True:
                _, got, t = await asyncio.wait_for(c.arrivals.values.get(), 5)
                if got == seq:
                    break
            latencies.append((t - t0) * 1000)
            await asyncio.sleep(0.03)
        xs = sorted(latencies)
        print(f"{c.name}: push -> arrival median {statistics.median(xs):.2f} ms, min {xs[0]:.2f}, "
              f"p90 {xs[int(0.9 * len(xs))]:.2f} ({samples} samples)")
    finally:
        await c.close()
        await bench.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, default=60)
    p.add_argument("runs", nargs="*", default=["relinkd", "bleak", "relinkd", "bleak"])
    args = p.parse_args()
    for kind in args.runs:
        asyncio.run(run(kind, args.samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
