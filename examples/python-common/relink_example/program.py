"""The program of a relink client that keeps one peripheral: the lock and
the band examples are this with their own service, characteristic and way
of printing a value.

It registers a restore identifier with relinkd, prints the restored state,
finds the peripheral, connects it, subscribes to one characteristic, then
prints every event in order with its sequence and acknowledges what it
printed. Run it again after a crash (or SIGKILL): it gets its state back
first, then every event it missed, once each, in order. SIGTERM or Ctrl-C:
acknowledge, leave the bus, exit 0 (relinkd keeps the link).

Finding the peripheral, in this order:
 1. the restored state already has it (an earlier run connected it);
 2. --address given: connect it by address;
 3. relinkd already knows it connected (a Peripheral1 object with
    Connected and the service, e.g. another program's identifier holds the
    link): connect that one and share the link. A connected peripheral does
    not advertise, so a scan would never find it;
 4. scan for the service, connect the first one found and stop the scan.
    When none is found within --scan-timeout seconds: stop the scan, print
    a hint, exit 5.
The scan is durable in relinkd (it outlives this program), so the program
stops it whenever it no longer needs it: once the peripheral is found, when
a later run finds the peripheral without it (restored, --address, already
connected), on the time limit, and on SIGTERM/Ctrl-C.

Exit status: 0 on SIGTERM/SIGINT, 1 on a relinkd error, 3 when the bus or
relinkd cannot be reached, 4 when relinkd broke the event contract (an event
before the Register reply, a sequence repeated within one attachment), 5
when the scan found nothing in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from dbus_fast import Message, MessageType, Variant

from .events import Event
from .relink import Central, Relink, RelinkError

RELINKD_GONE = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NoReply",
                "org.freedesktop.DBus.Error.NameHasNoOwner")

#: Exit status when the scan found nothing within --scan-timeout.
NOT_FOUND = 5


@dataclass(frozen=True)
class Target:
    """What a program keeps: a peripheral offering `service`, and the
    characteristic of it that the program subscribes to."""
    noun: str                          # "lock", "band": for messages
    label: str                         # what the characteristic holds: "lock state", "heart rate"
    service: str                       # 128-bit, lowercase
    characteristic: str                # 128-bit, lowercase
    value_text: Callable[[bytes], str]  # one notified value, for people
    readable: bool                     # read the current value after (re)connection


class Output:
    """Human-readable lines, or one JSON object per line with --json; also
    appended to a file with --output (a program the bus started has no
    terminal: docs/relaunch.md)."""

    def __init__(self, as_json: bool, path: str | None = None):
        self.as_json = as_json
        self.file = open(path, "a", buffering=1) if path else None

    def __call__(self, line_type: str, text: str, **fields: Any) -> None:
        line = json.dumps({"type": line_type, **fields}) if self.as_json else text
        print(line, flush=True)
        if self.file is not None:
            self.file.write(line + "\n")


class Contract(Exception):
    """relinkd broke a promise of the API (ordering, exactly-once)."""


class NotFound(Exception):
    """The scan found nothing within the time limit."""


class Program:
    def __init__(self, target: Target, args: argparse.Namespace, out: Output):
        self.target = target
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
        self.peripheral: str | None = None    # the peripheral's UUID, once known
        self.connecting = False
        self.scanning = False  # this program's scan is on in relinkd
        self.deadline: float | None = None    # monotonic time the scan gives up

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

    # -- registering, restoring, finding ---------------------------------------

    async def register(self) -> None:
        assert self.relink is not None
        self.reply_seen = False
        options = None
        if self.args.bus_name:
            # Relaunch: relinkd has the bus start this program by that name
            # when an event comes while it is not running (docs/relaunch.md).
            options = {"launch": Variant("a{sv}", {"bus_name": Variant("s", self.args.bus_name),
                                                   "wake_on": Variant("as", list(self.args.wake_on))})}
        path, restored = await self.relink.register(self.args.identifier, options)
        self.central = Central(self.relink, path)
        self.print_restored(restored)
        self.last = max(self.last, int(restored.get("acknowledged", 0)))
        self.acked = int(restored.get("acknowledged", 0))
        # Numbers the bound dropped (not yet acknowledged past); other gaps are
        # numbers relinkd skipped after a crash, never given to an event.
        first, last = restored.get("dropped_range", (0, 0))
        self.dropped = (int(first), int(last))
        self.attached = self.acked
        self.scanning = bool(restored.get("scanning"))
        mine = [p for p in restored.get("peripherals", []) if self.is_mine(p)]
        if mine:
            p = mine[0]
            self.peripheral = str(p.get("id", "")).lower()
            subscribed = any(str(c).lower() == self.target.characteristic for _, c in p.get("subscriptions", []))
            self.out("restore", f"restore: the {self.target.noun} is already known ({p.get('state')}); "
                     + ("subscribed" if subscribed else "subscribing again"),
                     peripheral=self.peripheral, state=p.get("state"), subscribed=subscribed)
            await self.stop_scan("the restored state has it")
            if not subscribed:
                await self.subscribe()
            return
        if self.args.address and not self.args.scan:
            await self.stop_scan("connecting by address")
            await self.connect(self.args.address)
            return
        held = None if self.args.address else await self.find_connected()
        if held is not None:
            self.out("already-connected",
                     f"found: the {self.target.noun} {held['Address']} is already connected "
                     f"(another identifier holds the link; this one shares it)",
                     peripheral=str(held["Id"]).lower(), address=held["Address"])
            await self.stop_scan("found already connected")
            await self.connect(str(held["Id"]))
            return
        timeout = self.args.scan_timeout
        self.out("scan", f"scan: looking for the {self.target.noun} service {self.target.service}"
                 + (f" for {timeout:g} s" if timeout > 0 else ""),
                 services=[self.target.service], timeout=timeout)
        await self.central.scan([self.target.service])
        self.scanning = True
        self.deadline = time.monotonic() + timeout if timeout > 0 else None

    def is_mine(self, p: dict[str, Any]) -> bool:
        if self.args.address:
            return str(p.get("address", "")).upper() == self.args.address.upper()
        return self.target.service in [str(s).lower() for s in p.get("services", [])] or \
            any(str(s).lower() == self.target.service for s, _ in p.get("subscriptions", []))

    async def find_connected(self) -> dict[str, Any] | None:
        """A peripheral relinkd has a link to that offers the service (the
        Peripheral1 objects this user may see), like CoreBluetooth's
        retrieveConnectedPeripherals(withServices:)."""
        assert self.relink is not None
        for p in await self.relink.peripherals():
            if p.get("Connected") and self.target.service in [str(s).lower() for s in p.get("Services", [])]:
                return p
        return None

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
        reason = r.get("launch_reason")
        if reason:
            # Like UIApplicationLaunchOptionsBluetoothCentralsKey: why relinkd had this program started.
            self.out("launch-reason", f"launched by relinkd: {', '.join(reason.get('events', []))} for "
                     f"{', '.join(reason.get('identifiers', []))}", launch_reason=reason)
        if r.get("dropped_events"):
            self.out("warning", f"warning: relinkd dropped {r['dropped_events']} events past its bound",
                     dropped_events=r["dropped_events"])

    async def connect(self, peripheral: str) -> None:
        assert self.central is not None
        self.connecting = True
        path = await self.central.connect(peripheral, [self.target.service])
        self.peripheral = path.rsplit("/", 1)[-1].replace("_", "-") if path else peripheral
        self.out("connect", f"connect: {peripheral} (pending until it connects; object {path})",
                 peripheral=peripheral, object=path)
        await self.subscribe()

    async def subscribe(self) -> None:
        assert self.central is not None and self.peripheral is not None
        await self.central.subscribe(self.peripheral, self.target.service, self.target.characteristic)
        self.out("subscribe", f"subscribe: {self.target.label}", peripheral=self.peripheral,
                 service=self.target.service, characteristic=self.target.characteristic)

    async def stop_scan(self, why: str) -> None:
        """Ends this identifier's scan in relinkd, if it has one."""
        self.deadline = None
        if not self.scanning or self.central is None:
            return
        try:
            await self.central.stop_scan()
        except RelinkError as e:
            if e.name not in RELINKD_GONE:
                raise
            # relinkd is away: the restored state says scanning next time, and this stops it then.
            return
        self.scanning = False
        self.out("stop-scan", f"scan: stopped ({why})", reason=why)

    async def scan_timed_out(self) -> None:
        timeout = self.args.scan_timeout
        await self.stop_scan("nothing found in time")
        noun = self.target.noun
        hint = (f"scan: no {noun} found in {timeout:g} s. A {noun} that is already connected does not "
                f"advertise: if another program here holds it, `relinkctl peripherals` lists it (as root or as "
                f"that program's user); run again with --address ADDRESS to share its link. Otherwise check that "
                f"the {noun} is powered and in range and that relinkd's adapter is on (`relinkctl status`).")
        self.out("hint", hint, message=hint, timeout=timeout, service=self.target.service)
        raise NotFound()

    # -- events ----------------------------------------------------------------

    def value_text(self, characteristic: str, value: bytes) -> str:
        if characteristic == self.target.characteristic:
            return f"{self.target.label} = {self.target.value_text(value)}"
        return f"{characteristic} = {value.hex()}"

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
        self.out("event", f"#{event.sequence:<4} {event.kind:<16} {event.describe(self.value_text)}",
                 sequence=event.sequence, kind=event.kind, payload=event.payload,
                 value=self.target.value_text(event.value) if event.kind == "value-notified" else None)
        if event.kind == "discovered" and not self.connecting and self.peripheral is None \
                and (not self.args.address or event.address == self.args.address.upper()):
            assert self.central is not None
            await self.connect(event.peripheral or event.address)
            await self.stop_scan(f"found the {self.target.noun}")
        elif event.kind == "restored" and self.target.readable:
            await self.read_current(event)

    async def read_current(self, event: Event) -> None:
        """After relinkd restarted (a `restored` link), the current value: one
        that changed while relinkd was down was never notified, so no event
        will tell it."""
        assert self.central is not None
        try:
            value = await self.central.read(event.peripheral, self.target.service, self.target.characteristic)
        except RelinkError as e:
            self.out("read-failed", f"read: could not read the current value now ({e.name})", error=e.name)
            return
        self.out("current", f"read: {self.target.label} is {self.target.value_text(value)} now (after #{event.sequence} {event.kind})",
                 sequence=event.sequence, value=self.target.value_text(value))

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
        self.relink = await Relink.attach(self.args.bus, self.on_message)
        if self.args.bus_name:
            # The bus's StartServiceByName is answered once the name is owned.
            await self.relink.bus.request_name(self.args.bus_name)
        await self.register()
        stopper = asyncio.ensure_future(stop.wait())
        closed = asyncio.ensure_future(self.relink.bus.wait_for_disconnect())
        try:
            while True:
                getter = asyncio.ensure_future(self.queue.get())
                left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
                await asyncio.wait({getter, stopper, closed}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    if closed.done():
                        self.out("bus-closed", "the bus went away", code=3)
                        return 3
                    if stopper.done():
                        await self.ack()
                        await self.stop_scan("exiting")
                        return 0
                    await self.ack()
                    await self.scan_timed_out()   # raises NotFound
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
            self.deadline = None   # the scan's time runs again once relinkd is back
            return
        self.out("relinkd", "relinkd is back: registering again", present=True)
        self.connecting = self.peripheral is not None
        await self.register()


def parse(argv: list[str], prog: str, description: str, default_identifier: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bus-address", "--bus", dest="bus", metavar="ADDRESS", default=os.environ.get("DBUS_SYSTEM_BUS_ADDRESS"),
                   help="bus address, as relinkctl's and relinkd's --bus-address (default: DBUS_SYSTEM_BUS_ADDRESS, "
                        "else the system bus; --bus is the same)")
    p.add_argument("--identifier", default=default_identifier,
                   help=f"restore identifier (default {default_identifier})")
    p.add_argument("--address", help="the peripheral's address; default: one already connected, else the first a scan finds")
    p.add_argument("--scan", action="store_true", help="with --address: scan for it instead of connecting by address")
    p.add_argument("--scan-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="give up a scan that found nothing after this long (default 30; 0: never)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--output", metavar="FILE", help="also append every line to FILE")
    p.add_argument("--bus-name", metavar="NAME",
                   help="own this D-Bus name and ask relinkd to have the bus start the program by it when an "
                        "event comes while it is not running (its activation file: docs/relaunch.md)")
    p.add_argument("--wake-on", action="append", default=[], metavar="KIND",
                   help="with --bus-name: an event kind that wakes it (repeatable; default: every event)")
    return p.parse_args(argv)


async def amain(target: Target, args: argparse.Namespace) -> int:
    out = Output(args.json, args.output)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    program = Program(target, args, out)
    try:
        code = await program.run(stop)
    except RelinkError as e:
        out("error", f"relinkd: {e}", error=e.name, message=e.text)
        code = 1
    except Contract as e:
        out("contract", f"relinkd broke the API contract: {e}", error=str(e))
        code = 4
    except NotFound:
        code = NOT_FOUND
    except (OSError, EOFError) as e:
        out("error", f"cannot reach the bus: {e}", error="bus", message=str(e))
        code = 3
    if program.relink is not None:
        program.relink.close()
    out("exit", f"exit {code} (processed through #{program.last}, acknowledged #{program.acked})",
        code=code, last=program.last, acked=program.acked)
    return code


def main(target: Target, prog: str, description: str, default_identifier: str) -> None:
    """Runs the program for `target` with the command line's arguments."""
    sys.exit(asyncio.run(amain(target, parse(sys.argv[1:], prog, description, default_identifier))))
