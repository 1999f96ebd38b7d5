"""The launcher's own D-Bus connection to the private bus (dbus-fast)."""

from typing import Any

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus


class BusError(Exception):
    def __init__(self, name: str, text: str):
        super().__init__(f"{name}: {text}")
        self.name = name


class BusClient:
    def __init__(self, address: str):
        self.address = address
        self.bus: MessageBus | None = None

    async def connect(self) -> None:
        self.bus = await MessageBus(bus_address=self.address).connect()

    def close(self) -> None:
        if self.bus is not None:
            self.bus.disconnect()
            self.bus = None

    async def call(self, dest: str, path: str, iface: str, member: str,
                   signature: str = "", body: list[Any] | None = None) -> list[Any]:
        assert self.bus is not None
        reply = await self.bus.call(Message(destination=dest, path=path, interface=iface,
                                            member=member, signature=signature, body=body or []))
        if reply.message_type == MessageType.ERROR:
            raise BusError(reply.error_name or "?", str(reply.body[0] if reply.body else ""))
        return reply.body

    async def name_owner(self, name: str) -> str | None:
        try:
            return (await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                    "org.freedesktop.DBus", "GetNameOwner", "s", [name]))[0]
        except BusError:
            return None

    async def managed_objects(self) -> dict[str, Any]:
        return (await self.call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager",
                                "GetManagedObjects"))[0]

    async def set_powered(self, adapter: str, on: bool) -> None:
        await self.call("org.bluez", f"/org/bluez/{adapter}", "org.freedesktop.DBus.Properties",
                        "Set", "ssv", ["org.bluez.Adapter1", "Powered", Variant("b", on)])

    async def zoo(self, member: str, signature: str = "", body: list[Any] | None = None):
        return await self.call("org.bluez", "/org/relinkbench", "org.relinkbench.Zoo1",
                               member, signature, body)
