"""relink-lock: an example relink client.

Registers a restore identifier with relinkd, prints the restored state, finds
the lock (scan for its service, or the address given), connects it, subscribes
to its lock state, then prints every event in order with its sequence and
acknowledges what it printed. Run it again after a crash (or SIGKILL): it gets
its state back first, then every event it missed, once each, in order.
SIGTERM or Ctrl-C: acknowledge, leave the bus, exit 0 (relinkd keeps the link).

  python -m relink_lock [--bus ADDRESS] [--identifier ID] [--address AA:BB:..] [--json]

Exit status: 0 on SIGTERM/SIGINT, 1 on a relinkd error, 3 when the bus or
relinkd cannot be reached, 4 when relinkd broke the event contract (an event
before the Register reply, a sequence repeated within one attachment).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from typing import Any

from dbus_fast import Message, MessageType

from .events import LOCK_SERVICE, LOCK_STATE, Event
from .relink import Central, Relink, RelinkError


RELINKD_GONE = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NoReply",
                "org.freedesktop.DBus.Error.NameHasNoOwner")


class Output:
    """Human-readable lines, or one JSON object per line with --json."""

    def __init__(self, as_json: bool):
        self.as_json = as_json

    def __call__(self, line_type: str, text: str, **fields: Any) -> None:
        if self.as_json:
            print(json.dumps({"type": line_type, **fields}), flush=True)
        else:
            print(text, flush=True)


class Contract(Exception):
    """relinkd broke a promise of the API (ordering, exactly-once)."""


class LockClient:
    def __init__(self, args: argparse.Namespace, out: Output):
        self.args = args
        self.out = out
        self.relink: Relink | None = None
        self.central: Central | None = None
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.reply_seen = False
        self.last = 0          # newest sequence processed (printed)
        self.acked = 0         # newest sequence acknowledged to relinkd
        self.attached = 0      # newest sequence received in this attachment (Register)
        self.dropped = (0, 0)  # dropped sequence range from the restored state (0, 0: none)
        self.lock: str | None = None    # the lock's peripheral UUID, once known
        self.connecting = False

    # -- incoming messages, in arrival order ---------------------------------

    def on_message(self, msg: Message) -> None:
        relink = self.relink
        if relink is None:
            return
        if msg.message_type == MessageType.METHOD_RETURN and relink.register_message is not None \
                and msg.reply_serial == relink.register_message.serial:
            self.reply_seen = True
        elif msg.message_type == MessageType.SIGNAL and msg.interface == "org.relink.Central1" \
                and msg.member == "Event" and msg.signature == "tss":
            if not self.reply_seen:
                self.queue.put_nowait(("contract", f"Event {msg.body[0]} arrived before the Register reply"))
            elif self.central is None or msg.path == self.central.path:
                self.queue.put_nowait(("event", Event.parse(*msg.body)))
        elif msg.message_type == MessageType.SIGNAL and msg.member == "NameOwnerChanged" \
                and msg.body and msg.body[0] == "org.relink":
            self.queue.put_nowait(("owner", msg.body[2]))

    # -- registering and restoring -------------------------------------------

    async def register(self) -> None:
        assert self.relink is not None
        self.reply_seen = False
        path, restored = await self.relink.register(self.args.identifier)
        self.central = Central(self.relink, path)
        self.print_restored(restored)
        self.last = max(self.last, int(restored.get("acknowledged", 0)))
        self.acked = int(restored.get("acknowledged", 0))
        # Numbers the bound dropped (not yet acknowledged past); other gaps are
        # numbers relinkd skipped after a crash, never given to an event.
        first, last = restored.get("dropped_range", (0, 0))
        self.dropped = (int(first), int(last))
        self.attached = self.acked
        mine = [p for p in restored.get("peripherals", []) if self.is_lock(p)]
        if mine:
            p = mine[0]
            self.lock = str(p.get("id", "")).lower()
            subscribed = any(str(c).lower() == LOCK_STATE for _, c in p.get("subscriptions", []))
            self.out("restore", f"restore: the lock is already known ({p.get('state')}); "
                     + ("subscribed" if subscribed else "subscribing again"),
                     peripheral=self.lock, state=p.get("state"), subscribed=subscribed)
            if not subscribed:
                await self.subscribe()
        elif self.args.address and not self.args.scan:
            await self.connect(self.args.address)
        else:
            self.out("scan", f"scan: looking for the lock service {LOCK_SERVICE}", services=[LOCK_SERVICE])
            await self.central.scan([LOCK_SERVICE])

    def is_lock(self, p: dict[str, Any]) -> bool:
        if self.args.address:
            return str(p.get("address", "")).upper() == self.args.address.upper()
        return LOCK_SERVICE in [str(s).lower() for s in p.get("services", [])] or \
            any(str(s).lower() == LOCK_SERVICE for s, _ in p.get("subscriptions", []))

    def print_restored(self, r: dict[str, Any]) -> None:
        lines = [f"restored: identifier {self.args.identifier!r}"
                 + (" is new (nothing to restore)" if r.get("new") else "")
                 + f"; last_sequence={r.get('last_sequence')} acknowledged={r.get('acknowledged')}"
                 + f" dropped_events={r.get('dropped_events')}"
                 + f"; scanning={r.get('scanning')} {r.get('scan_services') or ''}".rstrip()]
        for p in r.get("peripherals", []):
            subs = ", ".join(c for _, c in p.get("subscriptions", [])) or "none"
            lines.append(f"  peripheral {p.get('id')} {p.get('address')} {p.get('name')!r}: "
                         f"{p.get('state')}, subscriptions: {subs}")
        self.out("restored", "\n".join(lines), identifier=self.args.identifier, restored=r)
        if r.get("dropped_events"):
            self.out("warning", f"warning: relinkd dropped {r['dropped_events']} events past its bound",
                     dropped_events=r["dropped_events"])

    async def connect(self, peripheral: str) -> None:
        assert self.central is not None
        self.connecting = True
        path = await self.central.connect(peripheral)
        self.lock = path.rsplit("/", 1)[-1].replace("_", "-") if path else peripheral
        self.out("connect", f"connect: {peripheral} (pending until it connects; object {path})",
                 peripheral=peripheral, object=path)
        await self.subscribe()

    async def subscribe(self) -> None:
        assert self.central is not None and self.lock is not None
        await self.central.subscribe(self.lock, LOCK_SERVICE, LOCK_STATE)
        self.out("subscribe", "subscribe: lock state", peripheral=self.lock,
                 service=LOCK_SERVICE, characteristic=LOCK_STATE)

    # -- events ----------------------------------------------------------------

    async def handle(self, event: Event) -> None:
        if event.sequence <= self.attached:
            raise Contract(f"event {event.sequence} delivered twice in one attachment (after {self.attached})")
        self.attached = event.sequence
        if event.sequence <= self.last:
            # Replayed after relinkd restarted before our Ack reached it: already
            # processed (events are handled idempotently, by sequence number).
            self.out("skip", f"#{event.sequence:<4} already processed", sequence=event.sequence)
            return
        if event.sequence != self.last + 1:
            first, last = self.last + 1, event.sequence - 1
            lo, hi = self.dropped
            if lo and lo <= first and last <= hi:
                self.out("gap", f"warning: events {first}..{last} were dropped", first=first, last=last)
            else:
                self.out("renumbered", f"note: numbers {first}..{last} were not used (relinkd restarted after a crash)",
                         first=first, last=last)
        self.last = event.sequence
        self.out("event", f"#{event.sequence:<4} {event.kind:<16} {event.describe()}",
                 sequence=event.sequence, kind=event.kind, payload=event.payload,
                 value=event.value.decode("utf-8", "replace") if event.kind == "value-notified" else None)
        if event.kind == "discovered" and not self.connecting and self.lock is None \
                and (not self.args.address or event.address == self.args.address.upper()):
            assert self.central is not None
            await self.connect(event.peripheral or event.address)
            await self.central.stop_scan()
            self.out("stop-scan", "scan: stopped (found the lock)")

    async def ack(self) -> None:
        if self.central is not None and self.last > self.acked:
            try:
                await self.central.ack(self.last)
            except RelinkError as e:
                if e.name not in RELINKD_GONE:
                    raise
                # relinkd is away: it replays what we did not ack when we register again.
                self.out("ack-later", f"ack: relinkd is away ({e.name}); #{self.last} will be acked later",
                         sequence=self.last)
                return
            self.acked = self.last
            self.out("acked", f"ack: through #{self.last}", sequence=self.last)

    async def run(self, stop: asyncio.Event) -> int:
        self.relink = await Relink.connect(self.args.bus)
        self.relink.on_message(self.on_message)
        await self.relink.watch_owner()
        await self.register()
        stopper = asyncio.ensure_future(stop.wait())
        closed = asyncio.ensure_future(self.relink.bus.wait_for_disconnect())
        try:
            while True:
                getter = asyncio.ensure_future(self.queue.get())
                await asyncio.wait({getter, stopper, closed}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    if closed.done():
                        self.out("bus-closed", "the bus went away", code=3)
                        return 3
                    await self.ack()
                    return 0
                what, item = getter.result()
                if what == "contract":
                    raise Contract(item)
                if what == "owner":
                    await self.owner_changed(item)
                else:
                    await self.handle(item)
                if self.queue.empty():
                    await self.ack()
        finally:
            stopper.cancel()
            closed.cancel()

    async def owner_changed(self, owner: str) -> None:
        if not owner:
            self.out("relinkd", "relinkd left the bus; waiting for it to come back", present=False)
            return
        self.out("relinkd", "relinkd is back: registering again", present=True)
        self.connecting = self.lock is not None
        await self.register()


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="relink-lock", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bus", default=os.environ.get("DBUS_SYSTEM_BUS_ADDRESS"),
                   help="bus address (default: DBUS_SYSTEM_BUS_ADDRESS, else the system bus)")
    p.add_argument("--identifier", default="example-lock", help="restore identifier (default example-lock)")
    p.add_argument("--address", help="the lock's address; default: the first lock a scan finds")
    p.add_argument("--scan", action="store_true", help="with --address: scan for it instead of connecting by address")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    return p.parse_args(argv)


async def amain(args: argparse.Namespace) -> int:
    out = Output(args.json)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    client = LockClient(args, out)
    try:
        code = await client.run(stop)
    except RelinkError as e:
        out("error", f"relinkd: {e}", error=e.name, message=e.text)
        code = 1
    except Contract as e:
        out("contract", f"relinkd broke the API contract: {e}", error=str(e))
        code = 4
    except (OSError, EOFError) as e:
        out("error", f"cannot reach the bus: {e}", error="bus", message=str(e))
        code = 3
    if client.relink is not None:
        client.relink.close()
    out("exit", f"exit {code} (processed through #{client.last}, acknowledged #{client.acked})",
        code=code, last=client.last, acked=client.acked)
    return code


def main() -> None:
    sys.exit(asyncio.run(amain(parse(sys.argv[1:]))))


if __name__ == "__main__":
    main()
