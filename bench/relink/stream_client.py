"""The client of the streaming benchmark (stream_bench.py), in a process of
its own: it takes every band value relinkd or the floor relay forwards and
tallies it by link, printing nothing per value (a line per value would cost
the shared machine more than the agents being measured).

  python stream_client.py --bus ADDRESS --relinkd IDENTIFIER
  python stream_client.py --bus ADDRESS --relay [--ack]

--relinkd: attaches to the identifier as relinkd_client.py does (Register,
Central1.Event, Ack), a link being the event's peripheral UUID. --relay:
takes relay.c's unicast Value(ay) signals, a link being the signal's path
(the characteristic's); with --ack (relay.c --durable, whose values carry
a sequence number) it acknowledges what it took as relinkd's client does,
one Ack in flight, each covering everything taken before it.

Each value is a band measurement (relinkbench/peripheral/band.py): a
counter that grows by one per value, so a lost or doubled one shows.

Prints one JSON object per line on stdout, flushed:
  {"ev": "name", "name": UNIQUE_NAME}      (first)
  {"ev": "attached"}                       (--relinkd: each successful Register)
  {"ev": "report", "t": MONOTONIC, "values": N,
   "links": {LINK: {"count": N, "distinct": N, "first": C, "last": C}}}
                                           (for each line "report" on stdin)
"""

import argparse
import asyncio
import json
import os
import struct
import sys
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relinkd_client  # noqa: E402


def emit(ev: str, **fields) -> None:
    sys.stdout.write(json.dumps({"ev": ev, **fields}) + "\n")
    sys.stdout.flush()


def counter_of(value: bytes) -> int | None:
    """The band's counter: flags, heart rate, then a uint32 little-endian."""
    if len(value) < 6:
        return None
    return struct.unpack_from("<I", value, 2)[0]


class Tally:
    """Per link: values taken, distinct counters, the first and the last."""

    def __init__(self) -> None:
        self.links: dict[str, tuple[set[int], list[int]]] = {}
        self.values = 0

    def add(self, link: str, value: bytes) -> None:
        counter = counter_of(value)
        if counter is None:
            return
        self.values += 1
        entry = self.links.get(link)
        if entry is None:
            entry = self.links[link] = (set(), [0, counter, counter])
        seen, figures = entry
        seen.add(counter)
        figures[0] += 1
        figures[2] = max(figures[2], counter)

    def report(self) -> dict:
        return {"t": time.monotonic(), "values": self.values,
                "links": {link: {"count": f[0], "distinct": len(seen), "first": f[1], "last": f[2]}
                          for link, (seen, f) in self.links.items()}}


class RelinkdCounter(relinkd_client.Client):
    """relinkd_client's attach and acknowledgement; values tallied."""

    def __init__(self, bus: MessageBus, identifier: str, tally: Tally):
        super().__init__(bus, identifier, sink=lambda ev, **f: emit(ev) if ev == "attached" else None)
        self.tally = tally

    def taken(self, kind: str, payload: str) -> None:
        if kind != "value-notified":
            return
        try:
            body = next(iter(json.loads(payload).values()), {})
            self.tally.add(body["peripheral"]["uuid"], bytes(body["value"]))
        except (ValueError, TypeError, KeyError, AttributeError):
            pass


class RelayAcker:
    """Acknowledges relay.c --durable's values: one Ack in flight."""

    def __init__(self, bus: MessageBus):
        self.bus = bus
        self.after = 0
        self.acked = 0
        self.task: asyncio.Task | None = None

    def took(self, sender: str, sequence: int) -> None:
        self.after = max(self.after, sequence)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self.ack(sender))

    async def ack(self, relay: str) -> None:
        while self.acked < self.after:
            upto = self.after
            reply = await self.bus.call(Message(destination=relay, path="/", interface="org.relink.bench.Relay",
                                                member="Ack", signature="t", body=[upto]))
            if reply.message_type == MessageType.ERROR:
                sys.exit(f"Ack: {reply.error_name} {reply.body}")
            self.acked = upto


async def serve_reports(tally: Tally) -> None:
    """A report for each line "report" on stdin; stdin's end ends the client."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if line.strip() == b"report":
            emit("report", **tally.report())


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bus", required=True)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--relinkd", metavar="IDENTIFIER", help="attach to relinkd's identifier")
    which.add_argument("--relay", action="store_true", help="take relay.c's Value signals")
    p.add_argument("--ack", action="store_true", help="--relay: acknowledge each value (relay.c --durable)")
    args = p.parse_args()
    bus = await MessageBus(bus_address=args.bus, bus_type=BusType.SYSTEM).connect()
    tally = Tally()
    emit("name", name=bus.unique_name)
    if args.relinkd:
        task = asyncio.create_task(RelinkdCounter(bus, args.relinkd, tally).run())
    else:
        acker = RelayAcker(bus) if args.ack else None

        def on_message(msg: Message) -> None:
            if (msg.message_type == MessageType.SIGNAL and msg.interface == "org.relink.bench.Relay"
                    and msg.member == "Value"):
                tally.add(msg.path, bytes(msg.body[0]))
                if acker and len(msg.body) > 1:
                    acker.took(msg.sender, msg.body[1])
        bus.add_message_handler(on_message)
        task = asyncio.get_running_loop().create_future()
    await serve_reports(tally)
    task.cancel()


if __name__ == "__main__":
    asyncio.run(main())
