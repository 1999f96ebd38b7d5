"""What every simulated peripheral does: export its objects, register them
with org.bluez on its adapter (again whenever org.bluez gets a new owner),
and obey JSON-lines commands on stdin (replies and events on stdout)."""

import asyncio
import json
import sys
from typing import Any, Optional

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from .gatt import Advertisement, Characteristic, Descriptor, Service


class CommandError(Exception):
    pass


class Peripheral:
    kind = "peripheral"

    def __init__(self, name: str, adapter: str, adv_name: str, gap_name: str):
        self.name = name
        self.adapter_path = f"/org/bluez/{adapter}"
        self.root = f"/org/relinkbench/{name.replace('-', '_')}"
        self.app_path = f"{self.root}/app"
        self.adv_path = f"{self.root}/adv0"
        self.gap_name = gap_name
        self.bus: Optional[MessageBus] = None
        self.registrations = 0
        self.register_lock = asyncio.Lock()
        # What the current BlueZoo holds, so a retry redoes only what failed.
        self.app_registered = False
        self.adv_registered = False
        # Whether we want to advertise (set_advertising); a real-BlueZ bench
        # stops advertising before it powers our adapter off (btvirt keeps
        # advertising while powering off, and a central reconnects at once).
        self.advertising = True
        self.services: list[Service] = []
        self.chars: list[Characteristic] = []
        self.descriptors: list[Descriptor] = []
        self.adv = Advertisement(adv_name, self.advertised_uuids(),
                                 self.manufacturer_data(), self.service_data())
        # No GAP service (0x1800) of our own: bluetoothd serves it and refuses
        # an application that exports one. Its Device Name is the adapter's
        # Alias, which register() sets to gap_name.

    # -- to be specialised ---------------------------------------------------

    def advertised_uuids(self) -> list[str]:
        return []

    def manufacturer_data(self) -> dict[int, bytes]:
        return {}

    def service_data(self) -> dict[str, bytes]:
        return {}

    def state(self) -> dict[str, Any]:
        return {}

    async def command(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        raise CommandError(f"unknown command {cmd!r} for a {self.kind}")

    async def started(self) -> None:
        pass

    # -- building the GATT database ------------------------------------------

    def add_service(self, uuid: str, primary: bool = True) -> Service:
        svc = Service(f"{self.app_path}/service{len(self.services)}", uuid, primary)
        self.services.append(svc)
        return svc

    def add_char(self, svc: Service, uuid: str, flags: list[str], value: bytes = b"",
                 on_write=None) -> Characteristic:
        n = sum(1 for c in self.chars if c.service is svc)
        ch = Characteristic(f"{svc.path}/char{n}", svc, uuid, flags, value, on_write)
        self.chars.append(ch)
        return ch

    def add_descriptor(self, ch: Characteristic, uuid: str, flags: list[str], value: bytes = b"") -> Descriptor:
        n = sum(1 for d in self.descriptors if d.characteristic is ch)
        desc = Descriptor(f"{ch.path}/desc{n}", ch, uuid, flags, value)
        self.descriptors.append(desc)
        return desc

    def gatt_database(self) -> list[dict[str, Any]]:
        """The database as published: services in order, with inclusions
        (by UUID), characteristics (flags) and descriptors (flags)."""
        by_path = {s.path: s.uuid for s in self.services}
        return [{"uuid": s.uuid, "primary": s.primary, "includes": [by_path[p] for p in s.includes],
                 "characteristics": [{"uuid": c.uuid, "flags": c.flags,
                                      "descriptors": [{"uuid": d.uuid, "flags": d.flags}
                                                      for d in self.descriptors if d.characteristic is c]}
                                     for c in self.chars if c.service is s]}
                for s in self.services]

    # -- D-Bus ---------------------------------------------------------------

    def emit(self, obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    # D-Bus's default reply timeout. Commands are served one at a time: a
    # call bluetoothd never answered held every later command, `get`
    # included (Debian 12 gateway, a re-advertisement while the bench
    # started under a scanning relinkd); now it fails like any other error.
    CALL_TIMEOUT = 25.0

    async def _call(self, path: str, interface: str, member: str, signature: str, body: list):
        try:
            reply = await asyncio.wait_for(self.bus.call(Message(destination="org.bluez", path=path, interface=interface,
                                                                 member=member, signature=signature, body=body)),
                                           self.CALL_TIMEOUT)
        except asyncio.TimeoutError:
            raise RuntimeError(f"{member}: no reply from bluetoothd in {self.CALL_TIMEOUT:.0f} s") from None
        if reply.message_type == MessageType.ERROR:
            raise RuntimeError(f"{member}: {reply.error_name}: {reply.body}")
        return reply

    async def register(self) -> None:
        """Register the application, then the advertisement, on our adapter.

        In that order: a real peripheral's GATT database exists before it
        advertises and does not vanish when the central's bluetoothd
        restarts. Advertising first let a central connect in between (after
        a BlueZoo restart, under load) and find no services."""
        async with self.register_lock:
            await self._set_alias()
            if not self.app_registered:
                await self._call(self.adapter_path, "org.bluez.GattManager1",
                                 "RegisterApplication", "oa{sv}", [self.app_path, {}])
                self.app_registered = True
            if self.advertising and not self.adv_registered:
                await self._call(self.adapter_path, "org.bluez.LEAdvertisingManager1",
                                 "RegisterAdvertisement", "oa{sv}", [self.adv_path, {}])
                self.adv_registered = True
            self.registrations += 1
            self.emit({"event": "registered", "peripheral": self.name,
                       "registrations": self.registrations})

    async def _set_advertising(self, on: bool) -> None:
        async with self.register_lock:
            self.advertising = on
            try:
                if on and not self.adv_registered:
                    await self._call(self.adapter_path, "org.bluez.LEAdvertisingManager1",
                                     "RegisterAdvertisement", "oa{sv}", [self.adv_path, {}])
                    self.adv_registered = True
                elif not on and self.adv_registered:
                    await self._call(self.adapter_path, "org.bluez.LEAdvertisingManager1",
                                     "UnregisterAdvertisement", "o", [self.adv_path])
                    self.adv_registered = False
            except RuntimeError as e:
                raise CommandError(f"set_advertising: {e}")

    async def _set_alias(self) -> None:
        """The GAP Device Name a central reads is our adapter's Alias."""
        await self._call(self.adapter_path, "org.freedesktop.DBus.Properties", "Set", "ssv",
                         ["org.bluez.Adapter1", "Alias", Variant("s", self.gap_name)])

    async def _register_when_possible(self) -> None:
        for _ in range(200):
            try:
                await self.register()
                return
            except Exception as e:
                err = e
                await asyncio.sleep(0.05)
        self.emit({"event": "error", "peripheral": self.name, "error": f"register: {err}"})

    def _on_message(self, msg: Message) -> None:
        if (msg.message_type == MessageType.SIGNAL and msg.member == "NameOwnerChanged"
                and msg.interface == "org.freedesktop.DBus" and msg.body
                and msg.body[0] == "org.bluez" and msg.body[2]):
            # bluetoothd (BlueZoo) restarted: everything registered is gone.
            self.app_registered = False
            self.adv_registered = False
            for ch in self.chars:
                ch.notifying = False
            asyncio.get_running_loop().create_task(self._register_when_possible())

    async def connect(self) -> None:
        self.bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        self.bus.export(self.adv_path, self.adv)
        for svc in self.services:
            self.bus.export(svc.path, svc)
        for ch in self.chars:
            self.bus.export(ch.path, ch)
        for desc in self.descriptors:
            self.bus.export(desc.path, desc)
        self.bus.add_message_handler(self._on_message)
        await self.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus", member="AddMatch", signature="s",
            body=["type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                  "arg0='org.bluez'"]))

    # -- commands --------------------------------------------------------------

    def full_state(self) -> dict[str, Any]:
        return {"kind": self.kind, "adv_name": self.adv.local_name, "gap_name": self.gap_name,
                "registrations": self.registrations, "advertising": self.advertising,
                "adv_registered": self.adv_registered,
                "notifying": {c.uuid: c.notifying for c in self.chars if c.notifying},
                "gatt": self.gatt_database(),
                "descriptor_values": {f"{d.characteristic.uuid}/{d.uuid}": d.value.hex() for d in self.descriptors},
                **self.state()}

    async def handle(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        if cmd == "get":
            return self.full_state()
        if cmd == "set_adv_name":
            self.adv.rename(_str(args, "name"))
            return {"adv_name": self.adv.local_name}
        if cmd == "set_advertising":
            on = args.get("on")
            if not isinstance(on, bool):
                raise CommandError("on must be true or false")
            await self._set_advertising(on)
            return {"advertising": self.advertising}
        if cmd == "set_gap_name":
            self.gap_name = _str(args, "name")
            try:
                await self._set_alias()
            except RuntimeError as e:
                raise CommandError(f"set_gap_name: {e}")
            return {"gap_name": self.gap_name}
        return await self.command(cmd, args)

    async def serve_stdin(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            rid = None
            try:
                req = json.loads(line)
                rid = req.get("id")
                result = await self.handle(str(req.get("cmd")), req)
                self.emit({"id": rid, "ok": True, **result})
            except (CommandError, ValueError, KeyError, TypeError) as e:
                self.emit({"id": rid, "ok": False, "error": str(e)})
        # stdin closed: the launcher is gone or wants us to stop.

    async def run(self) -> None:
        await self.connect()
        await self._register_when_possible()
        await self.started()
        # Stop when stdin closes (the launcher) or the bus goes away.
        stdin = asyncio.ensure_future(self.serve_stdin())
        bus_gone = asyncio.ensure_future(self.bus.wait_for_disconnect())
        await asyncio.wait({stdin, bus_gone}, return_when=asyncio.FIRST_COMPLETED)


def _str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise CommandError(f"{key!r} must be a non-empty string")
    return value
