"""The relinkd client of the restoration benchmark, in a process of its own
as the peer's client (bleak_peer.py) is: what a program using relinkd runs.

  python relinkd_client.py --bus ADDRESS --identifier ID

Attaches to the identifier with Manager1.Register as soon as relinkd has its
bus name (again at once after each restart of relinkd), takes each
Central1.Event signal (stored ones replayed, then live), and acknowledges
what it took with Central1.Ack after the stamp, off the clock. Runs until
killed; nothing of its own is persisted (relinkd replays from its
acknowledged mark).

Prints one JSON object per line on stdout, flushed:
  {"ev": "value", "hex": H, "t": MONOTONIC}   (value in hand: signal read, payload decoded)
  {"ev": "disconnected", "payload": P}
  {"ev": "attached"}                          (each successful Register)
"""

import argparse
import asyncio
import json
import os
import sys
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relinkbench.apipaths import central_path  # noqa: E402,F401  (restore_bench uses it too)


def emit(ev: str, **fields) -> None:
    sys.stdout.write(json.dumps({"ev": ev, **fields}) + "\n")
    sys.stdout.flush()


def value_of(payload: str) -> bytes | None:
    """The value of a value-notified payload ({characteristic: {"value": [..]}})."""
    try:
        body = next(iter(json.loads(payload).values()), {})
        return bytes(body.get("value", []))
    except (ValueError, TypeError, AttributeError):
        return None


class Client:
    """`sink(ev, **fields)` takes what this prints (`emit`; restore_bench's
    `relinkd@signal` runs a Client in its own process with another sink)."""

    def __init__(self, bus: MessageBus, identifier: str, sink=emit):
        self.bus = bus
        self.identifier = identifier
        self.sink = sink
        self.has_owner = False
        self.fresh = asyncio.Event()  # relinkd took its name (again): attach
        self.after = 0
        self.acked = 0
        self.acker: asyncio.Task | None = None

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.member == "NameOwnerChanged" and msg.body and msg.body[0] == "org.relink":
            self.has_owner = bool(msg.body[2])
            if self.has_owner:
                self.fresh.set()
        elif msg.interface == "org.relink.Central1" and msg.member == "Event":
            seq, kind, payload = msg.body
            if seq <= self.after:
                return  # replayed again after a re-attach
            self.after = seq
            self.taken(kind, payload)
            if self.acker is None or self.acker.done():
                self.acker = asyncio.create_task(self.ack())

    def taken(self, kind: str, payload: str) -> None:
        """An event taken (once, in order): values and drops to the sink
        (stream_client.py tallies values instead)."""
        if kind == "value-notified":
            value = value_of(payload)
            t = time.monotonic()
            if value is not None:
                self.sink("value", hex=value.hex(), t=t)
        elif kind == "disconnected":
            self.sink("disconnected", payload=payload)

    async def ack(self) -> None:
        while self.acked < self.after:
            upto = self.after
            try:
                reply = await self.bus.call(Message(destination="org.relink", path=central_path(self.identifier),
                                                    interface="org.relink.Central1", member="Ack",
                                                    signature="t", body=[upto]))
            except (EOFError, OSError):
                return  # this client's bus connection closed
            if reply.message_type == MessageType.ERROR:
                return  # relinkd went away; the next attach replays from the acknowledged mark
            self.acked = upto

    async def run(self) -> None:
        self.bus.add_message_handler(self.on_message)
        reply = await self.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
            member="AddMatch", signature="s",
            body=["type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.relink'"]))
        if reply.message_type == MessageType.ERROR:
            sys.exit(f"AddMatch: {reply.body}")
        reply = await self.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
            member="NameHasOwner", signature="s", body=["org.relink"]))
        if reply.message_type != MessageType.ERROR and reply.body[0]:
            self.has_owner = True
            self.fresh.set()
        while True:
            await self.fresh.wait()
            self.fresh.clear()
            while self.has_owner:
                reply = await self.bus.call(Message(destination="org.relink", path="/org/relink",
                                                    interface="org.relink.Manager1", member="Register",
                                                    signature="sa{sv}", body=[self.identifier, {}]))
                if reply.message_type != MessageType.ERROR:
                    self.acked = 0
                    self.sink("attached")
                    break
                await asyncio.sleep(0.005)  # not up yet


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bus", required=True, help="the bus relinkd is on")
    p.add_argument("--identifier", required=True, help="the restore identifier to attach to")
    args = p.parse_args()
    bus = await MessageBus(bus_address=args.bus, bus_type=BusType.SYSTEM).connect()
    await Client(bus, args.identifier).run()


if __name__ == "__main__":
    asyncio.run(main())
