"""A small dbus-fast client for tests that look at org.bluez directly."""

import asyncio
import time
from typing import Any, Optional

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from relinkbench.waiting import wait_until_async


class BusError(Exception):
    def __init__(self, name: str, text: str):
        super().__init__(f"{name}: {text}")
        self.name = name
        self.text = text


class Client:
    def __init__(self, address: str):
        self.address = address
        self.bus: Optional[MessageBus] = None
        # (monotonic time, path, interface, changed properties)
        self.changes: list[tuple[float, str, str, dict[str, Any]]] = []
        self.added: list[tuple[float, str]] = []
        self.removed: list[tuple[float, str]] = []
        # (monotonic time, path, interfaces with their properties)
        self.added_props: list[tuple[float, str, dict[str, dict[str, Any]]]] = []

    async def __aenter__(self) -> "Client":
        self.bus = await MessageBus(bus_address=self.address).connect()
        self.bus.add_message_handler(self._on_message)
        for rule in ("type='signal',interface='org.freedesktop.DBus.Properties',"
                     "member='PropertiesChanged',path_namespace='/org/bluez'",
                     "type='signal',interface='org.freedesktop.DBus.ObjectManager'"):
            await self.call("AddMatch", "s", [rule], path="/org/freedesktop/DBus",
                            iface="org.freedesktop.DBus", dest="org.freedesktop.DBus")
        return self

    async def __aexit__(self, *exc) -> None:
        if self.bus:
            self.bus.disconnect()

    def _on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        now = time.monotonic()
        if msg.member == "PropertiesChanged":
            changed = {k: v.value for k, v in msg.body[1].items()}
            self.changes.append((now, msg.path, msg.body[0], changed))
        elif msg.member == "InterfacesAdded":
            self.added.append((now, msg.body[0]))
            self.added_props.append((now, msg.body[0], {i: {k: v.value for k, v in p.items()} for i, p in msg.body[1].items()}))
        elif msg.member == "InterfacesRemoved":
            self.removed.append((now, msg.body[0]))

    async def call(self, member: str, signature: str = "", body: Optional[list] = None, *,
                   path: str, iface: str, dest: str = "org.bluez", timeout: float = 30) -> list:
        assert self.bus
        reply = await asyncio.wait_for(self.bus.call(Message(
            destination=dest, path=path, interface=iface, member=member,
            signature=signature, body=body or [])), timeout)
        if reply.message_type == MessageType.ERROR:
            raise BusError(reply.error_name or "?", reply.body[0] if reply.body else "")
        return reply.body

    async def objects(self) -> dict[str, dict[str, dict[str, Any]]]:
        body = await self.call("GetManagedObjects", path="/",
                               iface="org.freedesktop.DBus.ObjectManager")
        return {p: {i: {k: v.value for k, v in props.items()} for i, props in ifs.items()}
                for p, ifs in body[0].items()}

    async def get(self, path: str, iface: str, prop: str) -> Any:
        body = await self.call("Get", "ss", [iface, prop], path=path,
                               iface="org.freedesktop.DBus.Properties")
        return body[0].value

    async def set(self, path: str, iface: str, prop: str, sig: str, value: Any) -> None:
        await self.call("Set", "ssv", [iface, prop, Variant(sig, value)], path=path,
                        iface="org.freedesktop.DBus.Properties")

    # Adapter / Device shortcuts
    async def start_discovery(self, filt: Optional[dict[str, Variant]] = None,
                              adapter: str = "/org/bluez/hci0") -> None:
        if filt is not None:
            await self.call("SetDiscoveryFilter", "a{sv}", [filt], path=adapter,
                            iface="org.bluez.Adapter1")
        await self.call("StartDiscovery", path=adapter, iface="org.bluez.Adapter1")

    async def stop_discovery(self, adapter: str = "/org/bluez/hci0") -> None:
        await self.call("StopDiscovery", path=adapter, iface="org.bluez.Adapter1")

    async def connect(self, device: str) -> None:
        await self.call("Connect", path=device, iface="org.bluez.Device1")

    async def disconnect(self, device: str) -> None:
        await self.call("Disconnect", path=device, iface="org.bluez.Device1")

    async def wait_for(self, predicate, timeout: float = 10.0, what: str = "condition"):
        """The first true result of the coroutine condition `predicate`, tried
        until `timeout` (the bench's one bounded wait)."""
        return await wait_until_async(predicate, timeout, what)

    async def wait_device(self, device: str, timeout: float = 10.0) -> None:
        async def present():
            return device in await self.objects()
        await self.wait_for(present, timeout, f"{device} to be found")

    async def wait_change(self, path: str, prop: str, value: Any = None, since: float = 0.0,
                          timeout: float = 10.0) -> Any:
        async def seen():
            for t, p, _, changed in self.changes:
                if t >= since and p == path and prop in changed and (
                        value is None or changed[prop] == value):
                    return (changed[prop],)
            return None
        return (await self.wait_for(seen, timeout, f"{prop}={value!r} on {path}"))[0]

    def values(self, path: str, prop: str, since: float = 0.0) -> list[Any]:
        return [c[prop] for t, p, _, c in self.changes if p == path and t >= since and prop in c]

    async def char_path(self, device: str, uuid: str) -> str:
        for p, ifs in (await self.objects()).items():
            ch = ifs.get("org.bluez.GattCharacteristic1")
            if p.startswith(device + "/") and ch and ch["UUID"] == uuid:
                return p
        raise AssertionError(f"no characteristic {uuid} under {device}")
