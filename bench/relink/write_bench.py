"""Writes without response through relinkd (issue 22, item 5's figure), on one
simulated bench, beside a program writing straight to bluetoothd.

  .venv/bin/python bench/relink/write_bench.py --relinkd .build/release/relinkd [--count 2000] [--rounds 3]

The bench's lock is connected (by relinkd, for an identifier); its command
characteristic takes writes without response and counts them. In each
round, alternating which goes first:
  * floor:   `WriteValue(value, {type: command})` on the characteristic's
             bluetoothd object, one call after another (what a program
             talking to bluetoothd does without AcquireWrite);
  * relinkd: `Central1.OpenWriteStream`, then `WriteStream1.Write` for each
             value; on `WriteQueueFull` it waits for the `ReadyToWrite`
             signal and writes the same value again (the documented way).
Each side's rate is --count values over the time from the first write to
the lock's counter having grown by all of them; lost = accepted writes the
lock never counted (goal 0). The bench's BlueZoo has no `AcquireWrite`, so
relinkd's stream uses its `WriteValue`-command queue here (docs/api/
WriteStream1.md): this measures relinkd's stream against the same transport,
not the socket path of real bluetoothd.

Every process started here is stopped on exit.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time

from dbus_fast import Message, MessageType, Variant

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from restore_bench import BenchFailure  # noqa: E402
from lock_session import LOCK_SERVICE, LockSession  # noqa: E402

LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
VALUE = b"lock"


class Run:
    def __init__(self, session: LockSession):
        self.s = session
        self.bench = session.bench
        self.call = session.call
        self.connected = asyncio.Event()
        self.ready = asyncio.Event()

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.interface == "org.relink.Central1" and msg.member == "Event" and msg.body[1] in ("connected", "restored"):
            self.connected.set()
        elif msg.interface == "org.relink.WriteStream1" and msg.member == "ReadyToWrite":
            self.ready.set()

    async def writes(self) -> int:
        return await self.s.lock_field("writes")

    async def counted(self, target: int) -> float:
        """When the lock's counter reached `target`."""
        return await self.s.lock_reached("writes", target)

    async def floor(self, char_path: str, count: int) -> tuple[float, int]:
        before = await self.writes()
        t0 = time.monotonic()
        for _ in range(count):
            await self.call("org.bluez", char_path, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}",
                            [VALUE, {"type": Variant("s", "command")}])
        t1 = await self.counted(before + count)
        return count / (t1 - t0), 0

    async def relinkd(self, address: str, count: int) -> tuple[float, int, int]:
        stream, _limit = await self.call("org.relink", self.s.central, "org.relink.Central1",
                                         "OpenWriteStream", "sss", [address, LOCK_SERVICE, LOCK_COMMAND])
        before = await self.writes()
        refused = 0
        t0 = time.monotonic()
        sent = 0
        while sent < count:
            self.ready.clear()
            reply = await self.s.bus.call(Message(destination="org.relink", path=stream, interface="org.relink.WriteStream1",
                                                member="Write", signature="ay", body=[VALUE]))
            if reply.message_type == MessageType.ERROR:
                if reply.error_name != "org.relink.Error.WriteQueueFull":
                    raise BenchFailure(f"Write: {reply.error_name} {reply.body}")
                refused += 1
                await asyncio.wait_for(self.ready.wait(), 30)
                continue
            sent += 1
        t1 = await self.counted(before + count)
        await self.call("org.relink", stream, "org.relink.WriteStream1", "Close")
        lost = before + count - await self.writes()
        return count / (t1 - t0), max(lost, 0), refused


async def run(args) -> dict:
    session = LockSession(args.relinkd, "writebench", "relink-writebench-")
    r = Run(session)
    try:
        await session.start(r.on_message)
        address = session.address
        await session.connect_lock()
        await asyncio.wait_for(r.connected.wait(), 60)
        char_path, _ = await session.lock_characteristic(LOCK_COMMAND)
        results = {"floor": [], "relinkd": [], "lost": [], "refused": []}
        for rnd in range(args.rounds):
            order = ["floor", "relinkd"] if rnd % 2 == 0 else ["relinkd", "floor"]
            for who in order:
                if who == "floor":
                    rate, _ = await r.floor(char_path, args.count)
                    results["floor"].append(rate)
                else:
                    rate, lost, refused = await r.relinkd(address, args.count)
                    results["relinkd"].append(rate)
                    results["lost"].append(lost)
                    results["refused"].append(refused)
        return results
    finally:
        await session.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--relinkd", required=True)
    p.add_argument("--count", type=int, default=2000, help="writes per side and round")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    res = asyncio.run(run(args))

    def fmt(xs: list[float]) -> str:
        return f"median {statistics.median(xs):.0f}/s (min {min(xs):.0f}, max {max(xs):.0f}, n={len(xs)})"
    print(f"{args.count} writes without response per side and round, {args.rounds} rounds, alternating order")
    print(f"relinkd WriteStream1.Write (waits for ReadyToWrite when refused): {fmt(res['relinkd'])}")
    print(f"floor: WriteValue type=command straight to bluetoothd:            {fmt(res['floor'])}")
    print(f"relinkd: values lost {sum(res['lost'])}; refused (then written again) per round {res['refused']}")
    return 0 if sum(res["lost"]) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
