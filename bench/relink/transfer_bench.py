"""A 256 KiB transfer through relinkd (issue 22 item 6's figure), on one
simulated bench, beside a program writing the same chunks straight to
bluetoothd; and what a relinkd SIGKILL during a transfer costs.

  .venv/bin/python bench/relink/transfer_bench.py --relinkd .build/release/relinkd [--size 262144] [--rounds 3] [--kills 5]

The bench's lock is connected (by relinkd, for an identifier); its firmware
characteristic records every value it receives (`firmware_log`). For each
write type (with response, without), in each round, alternating which goes
first:
  * floor:   the file in chunks of the link's ATT MTU - 3 (the `MTU`
             property of the characteristic's bluetoothd object), each a
             `WriteValue` call on it once the one before replied (type
             `request` or `command`): what a program talking to bluetoothd
             does without AcquireWrite (BlueZoo has none; real bluetoothd's
             socket path is not measured here);
  * relinkd: `Central1.StartTransfer` with the file.
Each side's time is from its first call to the lock having received every
byte; lost = bytes of the file the lock did not receive in order (goal 0).

Then, --kills times: a transfer without response and with `resume`; relinkd
is SIGKILLed once the lock has a third of it, started again; the transfer
completes; counted: the bytes the lock received twice (chunks written
again from the last stored offset) and lost bytes (goal 0).

Every process started here is stopped on exit.
"""

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time

from dbus_fast import Message, MessageType, Variant

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from restore_bench import BenchFailure  # noqa: E402
from lock_session import LOCK, LOCK_SERVICE, LockSession  # noqa: E402

LOCK_FIRMWARE = "8e7f1a03-4b2c-4d1e-9a3f-72656c696e6b"


def log_values(path: str) -> list[bytes]:
    """The values of a firmware_log file (4-byte little-endian length, bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    values, at = [], 0
    while at < len(raw):
        n = int.from_bytes(raw[at:at + 4], "little")
        values.append(raw[at + 4:at + 4 + n])
        at += 4 + n
    return values


def duplicates(values: list[bytes], data: bytes) -> int | None:
    """Bytes received twice when `values` are `data` from start to end where a
    value may start again at an earlier offset (sent again); None otherwise."""
    position = twice = 0
    for v in values:
        if data.startswith(v, position):
            position += len(v)
            continue
        start = next((s for s in range(position - 1, -1, -1) if data.startswith(v, s)), None)
        if start is None:
            return None
        twice += min(position, start + len(v)) - start
        position = max(position, start + len(v))
    return twice if position == len(data) else None


class Run:
    def __init__(self, session: LockSession):
        self.s = session
        self.bench = session.bench
        self.call = session.call
        self.connected = asyncio.Event()
        self.ended: dict[str, asyncio.Future] = {}

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL or msg.interface != "org.relink.Central1" or msg.member != "Event":
            return
        kind, payload = msg.body[1], msg.body[2]
        if kind in ("connected", "restored"):
            self.connected.set()
        elif kind in ("transfer-completed", "transfer-failed"):
            body = json.loads(payload)
            inner = next(iter(body.values()))
            fut = self.ended.get(inner["transfer"])
            if fut is not None and not fut.done():
                fut.set_result((kind, inner))

    async def received_all(self, target: int) -> float:
        """When the lock had received `target` bytes."""
        return await self.s.lock_reached("firmware_bytes", target, timeout=120)

    async def fresh_log(self, name: str) -> str:
        path = os.path.join(self.s.work, name)
        await self.bench.cmd("firmware_log", peripheral=LOCK, path=path)
        return path

    def lost(self, path: str, data: bytes) -> int:
        received = b"".join(log_values(path))
        if received == data:
            return 0
        return len(data) - sum(1 for a, b in zip(received, data) if a == b)

    async def floor(self, char_path: str, data: bytes, chunk: int, with_response: bool) -> tuple[float, int]:
        log = await self.fresh_log("floor.log")
        kind = "request" if with_response else "command"
        t0 = time.monotonic()
        for at in range(0, len(data), chunk):
            await self.call("org.bluez", char_path, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}",
                            [data[at:at + chunk], {"type": Variant("s", kind)}])
        t1 = await self.received_all(len(data))
        return t1 - t0, self.lost(log, data)

    async def start(self, data: bytes, options: dict) -> str:
        [transfer] = await self.call("org.relink", self.s.central, "org.relink.Central1", "StartTransfer", "sssaya{sv}",
                                     [self.s.address, LOCK_SERVICE, LOCK_FIRMWARE, data, options])
        self.ended[transfer] = asyncio.get_running_loop().create_future()
        return transfer

    async def relinkd(self, data: bytes, with_response: bool) -> tuple[float, int]:
        log = await self.fresh_log("relinkd.log")
        t0 = time.monotonic()
        transfer = await self.start(data, {"with_response": Variant("b", with_response)})
        t1 = await self.received_all(len(data))
        kind, inner = await asyncio.wait_for(self.ended[transfer], 60)
        if kind != "transfer-completed":
            raise BenchFailure(f"transfer failed: {inner}")
        return t1 - t0, self.lost(log, data)

    async def killed(self, data: bytes) -> tuple[int, int, int]:
        """A resuming transfer across a relinkd SIGKILL: (bytes twice, bytes lost, chunk)."""
        log = await self.fresh_log("killed.log")
        transfer = await self.start(data, {"with_response": Variant("b", False), "resume": Variant("b", True)})
        await self.s.lock_reached("firmware_bytes", len(data) // 3)
        await self.s.kill_and_restart_relinkd()
        kind, inner = await asyncio.wait_for(self.ended[transfer], 120)
        if kind != "transfer-completed":
            raise BenchFailure(f"transfer failed: {inner}")
        values = log_values(log)
        twice = duplicates(values, data)
        if twice is None:
            return -1, len(data), len(values[0])
        return twice, 0, len(values[0])


async def run(args) -> dict:
    session = LockSession(args.relinkd, "transferbench", "relink-transferbench-")
    r = Run(session)
    try:
        await session.start(r.on_message)
        await session.connect_lock()
        await asyncio.wait_for(r.connected.wait(), 60)
        char_path, props = await session.lock_characteristic(LOCK_FIRMWARE)
        mtu = props.get("MTU", Variant("q", 23)).value
        chunk = min(mtu - 3, 512)
        data = random.Random(22).randbytes(args.size)
        results: dict = {"chunk": chunk}
        for with_response in (True, False):
            key = "with" if with_response else "without"
            results[key] = {"floor": [], "relinkd": [], "lost": []}
            for rnd in range(args.rounds):
                order = ["floor", "relinkd"] if rnd % 2 == 0 else ["relinkd", "floor"]
                for who in order:
                    if who == "floor":
                        seconds, lost = await r.floor(char_path, data, chunk, with_response)
                    else:
                        seconds, lost = await r.relinkd(data, with_response)
                    results[key][who].append(seconds)
                    results[key]["lost"].append(lost)
        results["kills"] = [await r.killed(data) for _ in range(args.kills)]
        return results
    finally:
        await session.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--relinkd", required=True)
    p.add_argument("--size", type=int, default=256 * 1024, help="bytes per transfer")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--kills", type=int, default=5, help="transfers across a relinkd SIGKILL")
    args = p.parse_args()
    res = asyncio.run(run(args))

    def fmt(xs: list[float]) -> str:
        return f"median {statistics.median(xs) * 1000:.0f} ms (min {min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f}, n={len(xs)})"
    print(f"a {args.size}-byte transfer in chunks of {res['chunk']} bytes, {args.rounds} rounds, alternating order")
    lost = 0
    for key, label in (("with", "with response"), ("without", "without response")):
        print(f"{label}: relinkd StartTransfer: {fmt(res[key]['relinkd'])}")
        print(f"{label}: floor, WriteValue straight to bluetoothd: {fmt(res[key]['floor'])}")
        lost += sum(res[key]["lost"])
    twice = [k[0] for k in res["kills"]]
    lost += sum(k[1] for k in res["kills"])
    print(f"bytes lost: {lost}")
    if twice:
        print(f"across a relinkd SIGKILL (without response, resume), bytes received twice per transfer: {twice} "
              f"(chunks: {[t // res['chunk'] for t in twice]})")
    return 0 if lost == 0 and all(t >= 0 for t in twice) else 1


if __name__ == "__main__":
    sys.exit(main())
