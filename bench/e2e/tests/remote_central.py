"""A remote central on another bench adapter, as a third-party program sees
relinkd's peripheral role (issue 23): plain org.bluez calls (dbus-fast) on
its own adapter, the way bleak or bluetoothctl make them. It discovers an
advertisement, connects, finds the services, reads, writes, subscribes and
collects notifications (PropertiesChanged of Value), and finds it all again
after relinkd or bluetoothd restarted.

Also the program side: a client of org.relink.PeripheralManager1 that
registers the identifier (and so is attached) and collects its events."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import Future
from typing import Any, Optional

from dbus_fast import Message, MessageType, Variant

from e2e_harness import PERIPHERAL_MANAGER, Caller, DBusCallError, central_path, plain, wait_until

BLUEZ = "org.bluez"
DEVICE = "org.bluez.Device1"
ADAPTER = "org.bluez.Adapter1"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHAR = "org.bluez.GattCharacteristic1"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"


def full_uuid(uuid: str) -> str:
    """BlueZ's form of a UUID: 128-bit, lower case."""
    u = uuid.lower()
    if len(u) == 4:
        return f"0000{u}-0000-1000-8000-00805f9b34fb"
    if len(u) == 8:
        return f"{u}-0000-1000-8000-00805f9b34fb"
    return u


class RemoteCentral(Caller):
    """The central's bus connection, driving adapter `adapter` (e.g. hci3)."""

    def __init__(self, bus: str, adapter: str):
        super().__init__(bus)
        self.adapter = f"/org/bluez/{adapter}"
        self.add_match("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                       "member='PropertiesChanged'")

    def bluez(self, path: str, interface: str, member: str, signature: str = "", body: Optional[list] = None,
              timeout: float = 30.0) -> list:
        return self.call(path, interface, member, signature, body, destination=BLUEZ, timeout=timeout)

    def get(self, path: str, interface: str, prop: str) -> Any:
        return self.bluez(path, "org.freedesktop.DBus.Properties", "Get", "ss", [interface, prop])[0]

    def objects(self) -> dict[str, dict[str, dict[str, Any]]]:
        return self.bluez("/", OBJECT_MANAGER, "GetManagedObjects")[0]

    def device_path(self, address: str) -> str:
        return f"{self.adapter}/dev_{address.replace(':', '_')}"

    # -- discovery and connection --------------------------------------------------

    def discover(self, local_name: str, timeout: float = 20.0) -> dict[str, Any]:
        """Scans until a device advertising `local_name` is reported; returns
        its Device1 properties (with `path`)."""
        self.error_of(self.adapter, ADAPTER, "StartDiscovery", destination=BLUEZ)

        def found() -> Optional[dict[str, Any]]:
            for path, ifaces in self.objects().items():
                dev = ifaces.get(DEVICE)
                if path.startswith(self.adapter + "/") and dev and dev.get("Name") == local_name:
                    return {**dev, "path": path}
            return None
        try:
            return wait_until(found, timeout, f"an advertisement named {local_name!r} seen from {self.adapter}", 0.1)
        finally:
            self.error_of(self.adapter, ADAPTER, "StopDiscovery", destination=BLUEZ)

    def connect(self, address: str, timeout: float = 30.0) -> str:
        """Connects (BlueZ's Connect waits for the advertisement) and waits
        for ServicesResolved; returns the device's path."""
        path = self.device_path(address)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.bluez(path, DEVICE, "Connect", timeout=timeout)
                break
            except DBusCallError as e:
                # Not advertising yet (relinkd or bluetoothd still coming back).
                if time.monotonic() > deadline or e.name not in ("org.bluez.Error.Failed", "org.freedesktop.DBus.Error.UnknownObject",
                                                                 "org.freedesktop.DBus.Error.UnknownMethod",
                                                                 "org.bluez.Error.InProgress"):
                    raise
                time.sleep(0.1)
        wait_until(lambda: self.get(path, DEVICE, "ServicesResolved"), timeout, f"ServicesResolved on {path}")
        return path

    def connected(self, address: str) -> bool:
        try:
            return bool(self.get(self.device_path(address), DEVICE, "Connected"))
        except DBusCallError:
            return False

    def forget(self, address: str) -> None:
        """RemoveDevice: the next discovery needs a new advertisement report."""
        self.error_of(self.adapter, ADAPTER, "RemoveDevice", "o", [self.device_path(address)], destination=BLUEZ)

    def disconnect(self, address: str) -> None:
        self.error_of(self.device_path(address), DEVICE, "Disconnect", destination=BLUEZ)

    # -- GATT ---------------------------------------------------------------------

    def services(self, address: str) -> dict[str, list[str]]:
        """The device's services as the central found them: {service UUID: [characteristic UUIDs]}."""
        dev = self.device_path(address) + "/"
        objs = self.objects()
        out: dict[str, list[str]] = {}
        by_path = {p: i[GATT_SERVICE]["UUID"] for p, i in objs.items() if p.startswith(dev) and GATT_SERVICE in i}
        for uuid in by_path.values():
            out.setdefault(uuid, [])
        for p, i in objs.items():
            c = i.get(GATT_CHAR)
            if p.startswith(dev) and c and c.get("Service") in by_path:
                out[by_path[c["Service"]]].append(c["UUID"])
        return out

    def char_path(self, address: str, service: str, characteristic: str) -> str:
        dev = self.device_path(address) + "/"
        objs = self.objects()
        services = {p for p, i in objs.items() if p.startswith(dev) and GATT_SERVICE in i
                    and i[GATT_SERVICE]["UUID"] == full_uuid(service)}
        for p, i in objs.items():
            c = i.get(GATT_CHAR)
            if c and c.get("Service") in services and c["UUID"] == full_uuid(characteristic):
                return p
        raise AssertionError(f"{address} has no characteristic {service}/{characteristic}: {self.services(address)}")

    def read(self, path: str) -> bytes:
        return bytes(self.bluez(path, GATT_CHAR, "ReadValue", "a{sv}", [{}])[0])

    def read_later(self, path: str) -> Future:
        """Starts a read; the future is the reply Message (the read waits for the program's answer)."""
        return self._submit(path, "ReadValue", "a{sv}", [{}])

    def write(self, path: str, value: bytes, with_response: bool = True) -> None:
        self.bluez(path, GATT_CHAR, "WriteValue", "aya{sv}",
                   [value, {"type": Variant("s", "request" if with_response else "command")}])

    def write_later(self, path: str, value: bytes, kind: str = "request", offset: int = 0) -> Future:
        """Starts a write of `kind` (`request`, `reliable`, `command`: BlueZ's `type` option)."""
        options = {"type": Variant("s", kind)}
        if offset:
            options["offset"] = Variant("q", offset)
        return self._submit(path, "WriteValue", "aya{sv}", [value, options])

    def _submit(self, path: str, member: str, signature: str, body: list) -> Future:
        msg = Message(destination=BLUEZ, path=path, interface=GATT_CHAR, member=member, signature=signature, body=body)
        return asyncio.run_coroutine_threadsafe(self.bus.call(msg), self.loop)

    @staticmethod
    def outcome(reply: Message) -> Any:
        """A submitted call's reply: its value, or ('error', name)."""
        if reply.message_type == MessageType.ERROR:
            return ("error", reply.error_name)
        return bytes(reply.body[0]) if reply.body else None

    def start_notify(self, path: str) -> None:
        self.bluez(path, GATT_CHAR, "StartNotify")

    def notifications(self, path: str) -> list[bytes]:
        """Every value notified on the characteristic's object, in order."""
        out = []
        for m in list(self.signals):
            if m.path == path and m.member == "PropertiesChanged" and m.body and m.body[0] == GATT_CHAR:
                v = m.body[1].get("Value")
                if v is not None:
                    out.append(bytes(plain(v)))
        return out


class PeripheralProgram(Caller):
    """A program of the identifier's peripheral role: attached by Register,
    its events are the Central1.Event signals it receives."""

    def __init__(self, bus: str, identifier: str, register: bool = True):
        super().__init__(bus)
        self.identifier = identifier
        self.path = central_path(identifier)
        self.restored: dict[str, Any] = {}
        if register:
            self.register()

    def register(self) -> dict[str, Any]:
        self.signals.clear()
        _, self.restored = self.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", [self.identifier, {}])
        return self.restored

    def pm(self, member: str, signature: str = "", body: Optional[list] = None) -> list:
        return self.call(self.path, PERIPHERAL_MANAGER, member, signature, body)

    def publish(self, service: dict) -> None:
        self.pm("AddService", "s", [json.dumps(service)])

    def advertise(self, advertisement: dict) -> None:
        self.pm("StartAdvertising", "s", [json.dumps(advertisement)])

    def update(self, service: str, characteristic: str, value: bytes) -> None:
        self.pm("UpdateValue", "ssay", [service, characteristic, value])

    def state(self) -> dict:
        return json.loads(self.pm("State")[0])

    def events(self) -> list[tuple[int, str, dict]]:
        """(sequence, kind, payload) of every Event signal received, in order."""
        return [(int(m.body[0]), m.body[1], json.loads(m.body[2])) for m in list(self.signals)
                if m.member == "Event" and m.interface == "org.relink.Central1"]

    def wait_event(self, kind: str, timeout: float = 15.0, after: int = 0) -> tuple[int, str, dict]:
        return wait_until(lambda: next((e for e in self.events() if e[1] == kind and e[0] > after), None),
                          timeout, f"a {kind} event for {self.identifier}")

    def leave(self, observer: Caller) -> None:
        """Closes the program's connection and waits until the bus has let
        its name go (seen from `observer`'s connection): relinkd then has
        the bus's NameOwnerChanged before any later call a central makes,
        and treats the identifier as having no program (a write made just
        after a bare close could still be handed to the gone program, which
        never answers: ATT 0x0E after relinkd's 10 s bound, seen once under
        load)."""
        name = self.unique_name
        self.close()
        wait_until(lambda: observer.name_owner(name) is None, 10, "the bus letting the program's name go")

    def ack_all(self) -> None:
        evs = self.events()
        if evs:
            self.call(self.path, "org.relink.Central1", "Ack", "t", [max(e[0] for e in evs)])
