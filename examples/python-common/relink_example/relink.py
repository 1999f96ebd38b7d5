"""A thin client for relinkd's D-Bus API (org.relink.Manager1, Central1 and
the Peripheral1 objects), over dbus-fast. Only what the example programs
need; every call is a plain method call and every failure a RelinkError
carrying the org.relink.Error.* name relinkd replied with."""

from __future__ import annotations

from typing import Any, Callable

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

BUS_NAME = "org.relink"
MANAGER_PATH = "/org/relink"
MANAGER = "org.relink.Manager1"
CENTRAL = "org.relink.Central1"
PERIPHERAL = "org.relink.Peripheral1"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"


class RelinkError(Exception):
    """A D-Bus error reply: `name` is e.g. org.relink.Error.InvalidArguments."""

    def __init__(self, name: str, text: str):
        super().__init__(f"{name}: {text}")
        self.name = name
        self.text = text


def plain(value: Any) -> Any:
    """Variants unwrapped, recursively, so restored state prints as JSON."""
    if isinstance(value, Variant):
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


class Relink:
    """One connection to the bus relinkd is on."""

    def __init__(self, bus: MessageBus):
        self.bus = bus
        #: The last Register call sent, so that a message handler can tell
        #: its reply (which must come before any Event signal) apart.
        self.register_message: Message | None = None

    @classmethod
    async def connect(cls, address: str | None) -> "Relink":
        """Connects to `address`, or to the system bus (DBUS_SYSTEM_BUS_ADDRESS
        honoured) when None. Raises OSError when the bus cannot be reached."""
        bus = MessageBus(bus_address=address, bus_type=BusType.SYSTEM) if address \
            else MessageBus(bus_type=BusType.SYSTEM)
        await bus.connect()
        return cls(bus)

    @classmethod
    async def attach(cls, address: str | None, handler: Callable[[Message], None]) -> "Relink":
        """Connects, hands every incoming message to `handler` and asks for
        relinkd's NameOwnerChanged (what each example program starts with)."""
        relink = await cls.connect(address)
        relink.on_message(handler)
        await relink.watch_owner()
        return relink

    def on_message(self, handler: Callable[[Message], None]) -> None:
        """`handler` sees every incoming message, in the order they arrive
        (replies included); it must not block."""
        def wrapped(msg: Message) -> None:
            handler(msg)
            return None
        self.bus.add_message_handler(wrapped)

    async def call(self, path: str, interface: str, member: str, signature: str = "",
                   body: list[Any] | None = None) -> list[Any]:
        """Calls relinkd; returns the reply's body. Raises RelinkError."""
        return await self.send(Message(destination=BUS_NAME, path=path, interface=interface,
                                       member=member, signature=signature, body=body or []))

    async def send(self, msg: Message) -> list[Any]:
        """Sends a method call; returns the reply's body. Raises RelinkError."""
        reply = await self.bus.call(msg)
        if reply.message_type == MessageType.ERROR:
            text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
            raise RelinkError(reply.error_name or "?", text)
        return reply.body

    async def register(self, identifier: str, options: dict[str, Variant] | None = None
                       ) -> tuple[str, dict[str, Any]]:
        """Manager1.Register: (central object path, restored state)."""
        self.register_message = Message(destination=BUS_NAME, path=MANAGER_PATH, interface=MANAGER,
                                        member="Register", signature="sa{sv}",
                                        body=[identifier, options or {}])
        central, restored = await self.send(self.register_message)
        return central, plain(restored)

    async def peripherals(self) -> list[dict[str, Any]]:
        """The Peripheral1 objects this user may see (ObjectManager's
        GetManagedObjects): each one's properties (Id, Address, Connected,
        Services, Name, ...). A peripheral is visible when one of the user's
        identifiers has an intent or a subscription on it or discovered it;
        root sees every one (docs/api/access.md)."""
        (objects,) = await self.call(MANAGER_PATH, OBJECT_MANAGER, "GetManagedObjects")
        return [plain(ifaces[PERIPHERAL]) for ifaces in objects.values() if PERIPHERAL in ifaces]

    async def watch_owner(self) -> None:
        """Asks the bus for NameOwnerChanged of org.relink (relinkd leaving
        and coming back)."""
        await self.bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                    interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                                    body=["type='signal',sender='org.freedesktop.DBus',"
                                          "member='NameOwnerChanged',arg0='org.relink'"]))

    def close(self) -> None:
        self.bus.disconnect()


class Central:
    """Central1 of one identifier."""

    def __init__(self, relink: Relink, path: str):
        self.relink = relink
        self.path = path

    async def _call(self, member: str, signature: str = "", body: list[Any] | None = None) -> list[Any]:
        return await self.relink.call(self.path, CENTRAL, member, signature, body)

    async def scan(self, services: list[str], allow_duplicates: bool = False) -> None:
        await self._call("Scan", "asa{sv}", [services, {"allow_duplicates": Variant("b", allow_duplicates)}])

    async def stop_scan(self) -> None:
        await self._call("StopScan")

    async def connect(self, peripheral: str, services: list[str] | None = None) -> str:
        """Connect with no timeout: the intent stays pending until cancelled.
        `services`: what the peripheral offers (relinkd's already-connected
        route and bluetoothd's background auto-connect go by them)."""
        options = {"services": Variant("as", services)} if services else {}
        (path,) = await self._call("Connect", "sa{sv}", [peripheral, options])
        return path

    async def subscribe(self, peripheral: str, service: str, characteristic: str) -> None:
        await self._call("Subscribe", "sss", [peripheral, service, characteristic])

    async def read(self, peripheral: str, service: str, characteristic: str) -> bytes:
        """Reads the characteristic over the current link (NotConnected without one)."""
        (value,) = await self._call("Read", "sss", [peripheral, service, characteristic])
        return bytes(value)

    async def ack(self, sequence: int) -> None:
        await self._call("Ack", "t", [sequence])
