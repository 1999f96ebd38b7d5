"""relink-sensor: an example relink program in the peripheral role.

Registers a restore identifier with relinkd and, unless the restored state
already has them, publishes a sensor service and advertises it (relinkd
registers both with bluetoothd and keeps them across every restart):

  * level (0x2A19: read, notify, cacheable): the program updates it every
    --interval seconds; while the program is away relinkd answers reads
    with the last value;
  * uptime (read): answered by the program (seconds since it started);
  * command (write, write without response): printed, then acknowledged.

It prints the restored state first (services, advertisement, subscribed
centrals), then every event in order with its sequence, answers read and
write requests, and acknowledges what it printed. Writes a central made
while the program was away arrive as write-request events with request 0,
once each, in order. After UpdateQueueFull it waits for ready-to-update.
When relinkd restarts it registers again. SIGTERM or Ctrl-C: acknowledge,
leave the bus, exit 0 (relinkd keeps advertising and serving).

  relink-sensor [--bus-address ADDRESS] [--identifier ID] [--name LOCAL_NAME] [--interval S] [--json]

Exit status: 0 on SIGTERM/SIGINT, 1 on a relinkd error, 3 when the bus or
relinkd cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

from dbus_fast import Message, MessageType

from relink_example.program import RELINKD_GONE, Output
from relink_example.relink import Central, Relink, RelinkError

PERIPHERAL_MANAGER = "org.relink.PeripheralManager1"
SERVICE = "8e7f4a00-4b2c-4d1e-9a3f-72656c696e6b"
LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
UPTIME = "8e7f4a01-4b2c-4d1e-9a3f-72656c696e6b"
COMMAND = "8e7f4a02-4b2c-4d1e-9a3f-72656c696e6b"

SENSOR_SERVICE = {
    "uuid": SERVICE, "primary": True,
    "characteristics": [
        {"uuid": LEVEL, "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": True,
         "descriptors": [{"uuid": "2901", "value": list(b"Level")}]},
        {"uuid": UPTIME, "properties": ["read"], "permissions": ["readable"]},
        {"uuid": COMMAND, "properties": ["write", "writeWithoutResponse"], "permissions": ["writeable"]},
    ],
}


class Sensor:
    def __init__(self, args: argparse.Namespace, out: Output):
        self.args = args
        self.out = out
        self.relink: Relink | None = None
        self.path = ""
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.started = time.monotonic()
        self.level = 100
        self.last = 0
        self.acked = 0
        self.ready = asyncio.Event()

    def on_message(self, msg: Message) -> None:
        if msg.message_type == MessageType.SIGNAL and msg.interface == "org.relink.Central1" and msg.member == "Event":
            self.queue.put_nowait(("event", (int(msg.body[0]), msg.body[1], json.loads(msg.body[2]))))
        elif msg.message_type == MessageType.SIGNAL and msg.member == "NameOwnerChanged" and msg.body \
                and msg.body[0] == "org.relink":
            self.queue.put_nowait(("owner", msg.body[2]))

    async def pm(self, member: str, signature: str = "", body: list[Any] | None = None) -> list[Any]:
        assert self.relink is not None
        return await self.relink.call(self.path, PERIPHERAL_MANAGER, member, signature, body)

    async def register(self) -> None:
        assert self.relink is not None
        self.path, restored = await self.relink.register(self.args.identifier)
        self.acked = self.last = max(self.last, int(restored.get("acknowledged", 0)))
        role = json.loads(restored.get("peripheral_manager") or "{}")
        services = [s["uuid"] for s in role.get("services", [])]
        ad = role.get("advertisement")
        subscribers = [(s["characteristic"], s["centrals"]) for s in role.get("subscribers", [])]
        self.out("restored", f"restored: services {services or 'none'}; "
                 f"advertising {ad['localName'] if ad else 'no'}; subscribed centrals {subscribers or 'none'}",
                 services=services, advertising=ad is not None, subscribers=subscribers,
                 cached=role.get("cachedValues", []))
        for cached in role.get("cachedValues", []):
            if cached["characteristic"] == LEVEL and cached["value"]:
                self.level = cached["value"][0]   # go on from the last level a central could read
        if SERVICE not in services:
            await self.pm("AddService", "s", [json.dumps(SENSOR_SERVICE)])
            self.out("published", f"published: sensor service {SERVICE}", service=SERVICE)
        if ad is None:
            await self.pm("StartAdvertising", "s", [json.dumps({"localName": self.args.name, "serviceUUIDs": [SERVICE]})])
            self.out("advertising", f"advertising: {self.args.name}", name=self.args.name)

    async def handle(self, sequence: int, kind: str, payload: dict[str, Any]) -> None:
        body = next(iter(payload.values())) if len(payload) == 1 else payload
        self.last = max(self.last, sequence)
        if kind == "read-request":
            value = int(time.monotonic() - self.started).to_bytes(4, "little")
            if body["characteristic"]["characteristic"] == LEVEL:
                value = bytes([self.level])
            self.out("read", f"#{sequence:<4} read-request     {body['characteristic']['characteristic']} by {body['central']}",
                     sequence=sequence, request=body["request"], characteristic=body["characteristic"]["characteristic"])
            await self.answer(body["request"], value)
        elif kind == "write-request":
            value = bytes(body["value"])
            # `kind` (command, request, reliable) and `mtu`: absent from an older relinkd.
            kind_of_write = body.get("kind", "request" if body["withResponse"] else "command")
            self.out("write", f"#{sequence:<4} write-request    {value.hex()} by {body['central']} ({kind_of_write}"
                     + ("" if body["request"] else ", answered by relinkd") + ")",
                     sequence=sequence, request=body["request"], value=value.hex(), with_response=body["withResponse"],
                     kind=kind_of_write, mtu=body.get("mtu"))
            if body["request"]:
                await self.answer(body["request"], b"")
        elif kind in ("subscribed", "unsubscribed"):
            self.out(kind, f"#{sequence:<4} {kind:<16} {body['characteristic']['characteristic']} by {body['central']}",
                     sequence=sequence, characteristic=body["characteristic"]["characteristic"])
        elif kind == "ready-to-update":
            self.ready.set()
        else:
            self.out("event", f"#{sequence:<4} {kind}", sequence=sequence, kind=kind)

    async def answer(self, request: int, value: bytes) -> None:
        try:
            await self.pm("Respond", "tay", [request, value])
        except RelinkError as e:
            # Past relinkd's 10 s bound (e.g. a request replayed after a restart).
            self.out("late", f"answer to request {request}: {e.name}", request=request, error=e.name)

    async def update(self) -> None:
        self.level = self.level - 1 if self.level > 0 else 100
        while True:
            self.ready.clear()
            try:
                await self.pm("UpdateValue", "ssay", [SERVICE, LEVEL, bytes([self.level])])
                self.out("update", f"update: level {self.level}", level=self.level)
                return
            except RelinkError as e:
                if e.name in RELINKD_GONE:
                    return
                if e.name != "org.relink.Error.UpdateQueueFull":
                    raise
                await asyncio.wait_for(self.ready.wait(), 30)

    async def ack(self) -> None:
        if self.last <= self.acked:
            return
        try:
            await Central(self.relink, self.path).ack(self.last)
        except RelinkError as e:
            if e.name not in RELINKD_GONE:
                raise
            return   # relinkd is away: it replays what was not acked when we register again
        self.acked = self.last
        self.out("acked", f"ack: through #{self.last}", sequence=self.last)

    async def run(self, stop: asyncio.Event) -> int:
        self.relink = await Relink.attach(self.args.bus, self.on_message)
        await self.register()
        next_update = time.monotonic() + self.args.interval
        stopper = asyncio.ensure_future(stop.wait())
        present = True
        try:
            while True:
                getter = asyncio.ensure_future(self.queue.get())
                await asyncio.wait({getter, stopper}, timeout=max(0.0, next_update - time.monotonic()),
                                   return_when=asyncio.FIRST_COMPLETED)
                if stopper.done():
                    getter.cancel()
                    await self.ack()
                    return 0
                if not getter.done():
                    getter.cancel()
                    if present:
                        await self.update()
                    next_update = time.monotonic() + self.args.interval
                    continue
                what, item = getter.result()
                if what == "owner":
                    present = bool(item)
                    self.out("relinkd", "relinkd is back: registering again" if present
                             else "relinkd left the bus; waiting for it", present=present)
                    if present:
                        await self.register()
                else:
                    await self.handle(*item)
                if self.queue.empty():
                    await self.ack()
        finally:
            stopper.cancel()


async def amain(args: argparse.Namespace) -> int:
    out = Output(args.json)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    sensor = Sensor(args, out)
    try:
        code = await sensor.run(stop)
    except RelinkError as e:
        out("error", f"relinkd: {e}", error=e.name, message=e.text)
        code = 1
    except (OSError, EOFError) as e:
        out("error", f"cannot reach the bus: {e}", error="bus", message=str(e))
        code = 3
    if sensor.relink is not None:
        sensor.relink.close()
    out("exit", f"exit {code} (acknowledged #{sensor.acked})", code=code, acked=sensor.acked)
    return code


def main() -> None:
    p = argparse.ArgumentParser(prog="relink-sensor", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bus-address", "--bus", dest="bus", metavar="ADDRESS", default=os.environ.get("DBUS_SYSTEM_BUS_ADDRESS"),
                   help="bus address, as relinkctl's and relinkd's --bus-address (default: DBUS_SYSTEM_BUS_ADDRESS, "
                        "else the system bus; --bus is the same)")
    p.add_argument("--identifier", default="example-sensor", help="restore identifier (default example-sensor)")
    p.add_argument("--name", default="Sensor-1", help="the advertised Local Name (default Sensor-1)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between level updates (default 1)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    sys.exit(asyncio.run(amain(p.parse_args())))


if __name__ == "__main__":
    main()
