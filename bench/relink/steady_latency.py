"""Steady-state notification latency, link up: a probe pushed every 30 ms,
time from the push to its arrival at the client, for relinkd (Central1.Event
signal), for the bleak peer (its notify callback), and for `relay`: the least
any agent between bluetoothd and its client can do (relay.c, in C on libdbus:
StartNotify, then each value re-sent at once as a unicast signal to a
dbus-fast client, with no store and no checks). The relay is the floor for
relinkd's design: its distance to the peer is what the second hop itself
costs, whatever the agent does.

  .venv/bin/python bench/relink/steady_latency.py [--samples 60] [relinkd bleak relay relinkd=PATH ...]

Each argument is one run (a fresh contender on a fresh bench); the default
runs each of the three twice, interleaved, to show the spread.
`relinkd=PATH` runs another relinkd build (an A/B comparison). Build the
release relinkd first (bench/relink/run.sh does).
"""
import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import restore_bench as rb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RELINKD = os.path.join(HERE, "..", "..", ".build", "release", "relinkd")


class Relay(rb.Contender):
    """relay.c between bluetoothd and a dbus-fast client (this process)."""
    name = "relay (floor for any agent)"

    def __init__(self, bench: rb.Bench, work: str):
        super().__init__(bench, work)
        self.logpath = os.path.join(work, "relay.log")
        self.bus: MessageBus | None = None
        self.binary = os.path.join(work, "relay")

    def _on(self, msg: Message) -> None:
        if (msg.message_type == MessageType.SIGNAL and msg.interface == "org.relink.bench.Relay"
                and msg.member == "Value"):
            t = time.monotonic()
            probe = rb.parse_probe(bytes(msg.body[0]))
            if probe:
                self.arrivals.values.put_nowait((*probe, t))

    async def _bluez(self, member: str, path: str, iface: str):
        return await rb.bluez_call(self.bus, member, path, iface)

    async def setup(self, links: list[int]) -> None:
        """Connect the lock as a third party (this process), then start the
        relay on its lock-state characteristic."""
        self.links = links
        rb.build_relay(self.binary)
        self.bus = await MessageBus(bus_address=self.bench.bus, bus_type=BusType.SYSTEM).connect()
        self.bus.add_message_handler(self._on)
        device = rb.device_path(self.bench, self.bench.locks[0])
        await self._bluez("StartDiscovery", "/org/bluez/hci0", "org.bluez.Adapter1")
        for _ in range(200):
            try:
                await self._bluez("Connect", device, "org.bluez.Device1")
                break
            except rb.BenchFailure:
                await asyncio.sleep(0.1)
        await self._bluez("StopDiscovery", "/org/bluez/hci0", "org.bluez.Adapter1")
        (objects,) = await self._bluez("GetManagedObjects", "/", "org.freedesktop.DBus.ObjectManager")
        path = rb.characteristic_path(objects, device, rb.LOCK_STATE)
        if path is None:
            raise rb.BenchFailure("relay: the lock state characteristic did not appear")
        log = open(self.logpath, "ab")
        self.proc = await asyncio.create_subprocess_exec(
            self.binary, self.bench.bus, self.bus.unique_name, path,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=log,
            preexec_fn=rb.die_with_parent)
        log.close()
        line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
        if line.strip() != b"ready":
            raise rb.BenchFailure("relay did not start:\n" + self.log_tail())

    async def close(self) -> None:
        await self.kill()
        if self.bus:
            await rb.quiet_disconnect(self.bus)
            self.bus = None


def contender(kind: str, bench: rb.Bench, work: str) -> rb.Contender:
    if relinkd := rb.relinkd_contender(kind, bench, work, RELINKD, 5):
        return relinkd
    if kind == "bleak":
        return rb.BleakPeer(bench, work)
    if kind == "relay":
        return Relay(bench, work)
    raise SystemExit(f"unknown contender {kind!r} (relinkd, relinkd=PATH, bleak, relay)")


async def run(kind: str, samples: int, keep: bool = False) -> float:
    work = tempfile.mkdtemp(prefix="relink-steady-")
    bench = rb.Bench(1, 20.0, work)
    await bench.start()
    c = contender(kind, bench, work)
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
              f"p90 {xs[int(0.9 * len(xs))]:.2f} ({samples} samples)", flush=True)
        return statistics.median(xs)
    finally:
        await c.close()
        await bench.stop()
        if keep:
            print(f"  logs kept in {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, default=60)
    p.add_argument("--keep-logs", action="store_true", help="keep each run's work directory (logs)")
    p.add_argument("runs", nargs="*", default=["relinkd", "bleak", "relay", "relinkd", "bleak", "relay"])
    args = p.parse_args()
    medians: dict[str, list[float]] = {}
    for kind in args.runs:
        medians.setdefault(kind, []).append(asyncio.run(run(kind, args.samples, args.keep_logs)))
    print("medians of the runs, ms: " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
