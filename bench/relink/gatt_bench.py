"""The GATT database in a client's hands (issue 22, item 1's figure), on one
simulated bench.

  .venv/bin/python bench/relink/gatt_bench.py --relinkd .build/release/relinkd [--reps 20]

A client registered with relinkd has a connection intent on the lock
(connected, subscribed). Each rep takes the lock out of range and back; when
the client reads the `connected` Event signal it stamps the time, then asks
for the database in two ways, in alternating order:
  * relinkd: `Central1.GattDatabase(lock)`, one call, the JSON decoded;
  * floor:   what a program talking to bluetoothd itself does once
             `ServicesResolved` is true (bleak's service discovery):
             `GetManagedObjects` on org.bluez, the device's services,
             characteristics and descriptors picked out by path.
Prints, for each, the time from asking (right after `connected` is in hand)
to the database in hand (median, min, max) and how many services/characteristics/descriptors each
saw (they must agree, or the rep fails). Also the time from the link's
`Connected=true` on the bench's bus to `connected` at the client (what
relinkd's own work adds before the client can ask at all).

Every process started here is stopped on exit.
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
import time

from dbus_fast import Message, MessageType

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import restore_bench  # noqa: E402
from restore_bench import BenchFailure  # noqa: E402
from lock_session import LOCK, LockSession  # noqa: E402


def counts_of_database(text: str) -> tuple[int, int, int]:
    """Services, characteristics and descriptors in relinkd's JSON."""
    db = json.loads(text)
    services = db["services"]
    chars = [c for s in services for c in s.get("characteristics", [])]
    descs = [d for c in chars for d in c.get("descriptors", [])]
    return len(services), len(chars), len(descs)


def counts_of_objects(objects: dict, device: str) -> tuple[int, int, int]:
    """Services, characteristics and descriptors of `device` in bluetoothd's objects."""
    def count(interface: str) -> int:
        return sum(1 for path, ifaces in objects.items()
                   if path.startswith(device + "/") and interface in ifaces)
    return count("org.bluez.GattService1"), count("org.bluez.GattCharacteristic1"), count("org.bluez.GattDescriptor1")


class Run:
    def __init__(self, session: LockSession):
        self.s = session
        self.call = session.call
        self.events: asyncio.Queue = asyncio.Queue()
        self.link_up: asyncio.Queue = asyncio.Queue()
        self.device = ""

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        t = time.monotonic()
        if msg.interface == "org.relink.Central1" and msg.member == "Event":
            self.events.put_nowait((msg.body[1], t))
        elif (msg.member == "PropertiesChanged" and msg.path == self.device
              and msg.body[0] == "org.bluez.Device1" and "Connected" in msg.body[1]
              and msg.body[1]["Connected"].value):
            self.link_up.put_nowait(t)

    async def wait_event(self, kind: str, timeout: float = 60) -> float:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchFailure(f"no {kind} event within {timeout} s")
            got, t = await asyncio.wait_for(self.events.get(), left)
            if got == kind:
                return t

    async def relinkd_database(self, address: str) -> tuple[float, tuple[int, int, int]]:
        [text] = await self.call("org.relink", self.s.central, "org.relink.Central1", "GattDatabase", "s", [address])
        counts = counts_of_database(text)
        return time.monotonic(), counts

    async def bluez_database(self) -> tuple[float, tuple[int, int, int]]:
        [objects] = await self.call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        counts = counts_of_objects(objects, self.device)
        return time.monotonic(), counts


async def run(args) -> dict:
    session = LockSession(args.relinkd, "gattbench", "relink-gattbench-")
    r = Run(session)
    try:
        await session.start(r.on_message)
        bench = session.bench
        address = session.address
        r.device = restore_bench.device_path(bench, LOCK)
        await r.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                     [f"type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',path='{r.device}'"])
        await session.connect_lock()
        await r.wait_event("connected")
        results = {"relinkd": [], "floor": [], "link_to_connected": [], "counts": []}
        for rep in range(args.reps):
            await bench.cmd("out_of_range", peripheral=LOCK)
            await r.wait_event("disconnected")
            while not r.link_up.empty():
                r.link_up.get_nowait()
            await bench.cmd("in_range", peripheral=LOCK)
            t0 = await r.wait_event("connected")
            # Both asked as soon as `connected` is in hand, one after the
            # other, in alternating order; each timed from its own start.
            first = ["relinkd", "floor"] if rep % 2 == 0 else ["floor", "relinkd"]
            got = {}
            for who in first:
                start = time.monotonic()
                t1, counts = await (r.relinkd_database(address) if who == "relinkd" else r.bluez_database())
                got[who] = (t1 - start, counts)
            if got["relinkd"][1] != got["floor"][1]:
                raise BenchFailure(f"rep {rep}: relinkd saw {got['relinkd'][1]}, bluetoothd has {got['floor'][1]}")
            results["relinkd"].append(got["relinkd"][0])
            results["floor"].append(got["floor"][0])
            results["counts"] = list(got["relinkd"][1])
            if not r.link_up.empty():
                results["link_to_connected"].append(t0 - r.link_up.get_nowait())
        return results
    finally:
        await session.close()


def fmt(xs: list[float]) -> str:
    if not xs:
        return "n/a"
    ms = [x * 1000 for x in xs]
    return f"median {statistics.median(ms):.2f} ms (min {min(ms):.2f}, max {max(ms):.2f}, n={len(ms)})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--relinkd", required=True)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json", help="write the raw figures here")
    args = p.parse_args()
    results = asyncio.run(run(args))
    s, c, d = results["counts"]
    print(f"database: {s} services, {c} characteristics, {d} descriptors (relinkd and bluetoothd agree in every rep)")
    print(f"asked at `connected` -> database in hand, relinkd GattDatabase: {fmt(results['relinkd'])}")
    print(f"the floor, GetManagedObjects on bluetoothd and pick the device:  {fmt(results['floor'])}")
    print(f"Connected=true on the bus -> `connected` in the client's hands:  {fmt(results['link_to_connected'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
