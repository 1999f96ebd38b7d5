"""relinkd start-up with a large store: time from spawn to READY and the
resident memory after it, on the simulated bench.

  .venv/bin/python bench/relink/startup_bench.py [--identifiers 1000] [--per-identifier 10] [--runs 3]
  .venv/bin/python bench/relink/startup_bench.py --identifiers 100,300,1000 --json   # one JSON line per size

`--identifiers` takes several sizes, comma-separated, measured one after the
other in this run. With `--json` each size ends with one line on stdout,
{"identifiers", "intents", "ready_s", "ready_all_s", "rss_kib", "rss_all_kib"}
(medians over --runs, and every run), and the human lines go to stderr.
`--memory` adds, per run, where relinkd's resident memory is after READY
(/proc/PID/smaps_rollup, the largest mappings, the threads, and its own
file's resident pages by Swift module: resident_modules.py).

The store is populated once by `relink-store-torture bench` (the store
benchmark's population: per identifier a scan intent, and per peripheral a
connection intent and a subscription; none of those peripherals exists on
the bench, so every intent starts its strategies and most end up scanning).
Each run copies that store, spawns the release relinkd on a fresh bench with
journald-style output to stderr, and waits for its "relinkd ready" line.
Build first: scripts/build-release.sh relinkd relink-store-torture.
"""
import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import socket
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resident_modules  # noqa: E402
import restore_bench as rb  # noqa: E402

ROOT = rb.ROOT
RELINKD = os.path.join(ROOT, ".build", "release", "relinkd")
TORTURE = os.path.join(ROOT, ".build", "release", "relink-store-torture")


def populate(directory: str, identifiers: int, per_identifier: int) -> str:
    subprocess.run([TORTURE, "bench", "--directory", directory, "--identifiers", str(identifiers),
                    "--per-identifier", str(per_identifier), "--loads", "1", "--clients", "1", "--seconds", "0.2"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(directory, "state")


def memory_report(pid: int) -> str:
    """Where a process's resident memory is: smaps_rollup's totals, the
    resident mappings grouped by name (anonymous ones by size), the threads."""
    lines = []
    with open(f"/proc/{pid}/smaps_rollup") as f:
        rollup = {l.split(":")[0]: l.split(":")[1].strip() for l in f if ":" in l and not l.startswith("0")}
    lines.append("  " + ", ".join(f"{k} {rollup[k]}" for k in ("Rss", "Pss", "Anonymous", "Private_Dirty", "Shared_Clean")
                                   if k in rollup))
    groups: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps") as f:
        name = ""
        for line in f:
            head = line.split()
            if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                start, end = (int(x, 16) for x in head[0].split("-"))
                name = head[5] if len(head) > 5 else f"[anon {(end - start) // 1024} kB]"
            elif head and head[0] == "Rss:":
                groups[name] = groups.get(name, 0) + int(head[1])
    for name, kib in sorted(groups.items(), key=lambda kv: -kv[1])[:15]:
        lines.append(f"  {kib:8d} kB  {name}")
    threads = os.listdir(f"/proc/{pid}/task")
    lines.append(f"  threads: {len(threads)}")
    return "\n".join(lines)


class ReadyListener:
    """The service manager's side of sd_notify: a datagram socket to give
    relinkd as $NOTIFY_SOCKET, and the time its READY=1 arrives. As systemd
    measures a Type=notify unit, and exact: polling relinkd's log for its
    ready line every 50 ms put every figure on a 50 ms grid (15% of a
    1,000-intent start-up)."""

    def __init__(self, work: str):
        self.path = os.path.join(work, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.setblocking(False)

    def environment(self) -> dict:
        return {**os.environ, "NOTIFY_SOCKET": self.path}

    async def wait(self, proc: subprocess.Popen, t0: float, bound: float = 300) -> float:
        """Seconds from t0 until READY=1; fails when relinkd exits first or
        after `bound` seconds."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    data = await asyncio.wait_for(loop.sock_recv(self.sock, 4096), timeout=1.0)
                except asyncio.TimeoutError:  # a bound on each wait, to look at the process
                    if proc.poll() is not None or time.monotonic() - t0 > bound:
                        raise RuntimeError(f"relinkd did not become ready (exit {proc.poll()})") from None
                    continue
                if b"READY=1" in data.split(b"\n"):
                    return time.monotonic() - t0
        finally:
            self.sock.close()


async def one_run(state: str, work: str, relinkd: str, memory: bool = False) -> tuple[float, int]:
    bench = rb.Bench(1, 20.0, work)
    await bench.start()
    proc = None
    try:
        run_state = os.path.join(work, "state")
        shutil.copytree(state, run_state)
        log_path = os.path.join(work, "relinkd.log")
        listener = ReadyListener(work)
        with open(log_path, "wb") as log:
            t0 = time.monotonic()
            proc = subprocess.Popen([relinkd, "--bus-address", bench.bus, "--state-directory", run_state,
                                     "--log-destination", "stderr"], stdout=log, stderr=log,
                                    env=listener.environment(), preexec_fn=rb.die_with_parent)
            ready = await listener.wait(proc, t0)
        await asyncio.sleep(1)
        with open(f"/proc/{proc.pid}/status") as f:
            rss = int(next(line for line in f if line.startswith("VmRSS:")).split()[1])
        if memory:
            print(memory_report(proc.pid), file=sys.stderr, flush=True)
            print(resident_modules.report(proc.pid), file=sys.stderr, flush=True)
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
    p.add_argument("--identifiers", default="1000", help="one size or several, comma-separated: 100,300,1000")
    p.add_argument("--per-identifier", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--relinkd", default=RELINKD, help="the relinkd binary (e.g. an older build, to compare)")
    p.add_argument("--json", action="store_true", help="one JSON line per size on stdout; the rest on stderr")
    p.add_argument("--memory", action="store_true", help="after each READY, where the resident memory is")
    args = p.parse_args()
    sizes = [int(x) for x in args.identifiers.split(",")]
    out = sys.stderr if args.json else sys.stdout
    for binary in (args.relinkd, TORTURE):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: scripts/build-release.sh relinkd relink-store-torture")
    top = tempfile.mkdtemp(prefix="relink-startup-", dir="/var/tmp")
    try:
        for identifiers in sizes:
            state = populate(os.path.join(top, f"population{identifiers}"), identifiers, args.per_identifier)
            readies, rsss = [], []
            for n in range(args.runs):
                work = os.path.join(top, f"run{identifiers}-{n}")
                os.makedirs(work)
                ready, rss = asyncio.run(one_run(state, work, args.relinkd, memory=args.memory))
                readies.append(ready)
                rsss.append(rss)
                print(f"run {n + 1}: ready after {ready:.2f} s, resident {rss / 1024:.0f} MiB", file=out, flush=True)
                shutil.rmtree(work, ignore_errors=True)
            intents = identifiers * args.per_identifier
            print(f"{identifiers} identifiers, {intents} connection intents: "
                  f"ready median {statistics.median(readies):.2f} s (min {min(readies):.2f}, max {max(readies):.2f}), "
                  f"resident median {statistics.median(rsss) / 1024:.0f} MiB", file=out, flush=True)
            if args.json:
                print(json.dumps({"identifiers": identifiers, "intents": intents,
                                  "ready_s": round(statistics.median(readies), 4),
                                  "ready_all_s": [round(r, 4) for r in readies],
                                  "rss_kib": statistics.median(rsss), "rss_all_kib": rsss}), flush=True)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
