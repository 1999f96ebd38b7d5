"""BlueZ peripheral-side D-Bus objects (LEAdvertisement1, GattService1,
GattCharacteristic1) with dbus-fast."""

from typing import Awaitable, Callable, Optional

from dbus_fast import DBusError, PropertyAccess, Variant
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property


def byte_variants(data: dict) -> dict:
    """An advertisement's ManufacturerData or ServiceData as D-Bus takes
    it: each key's bytes in a variant of "ay"."""
    return {k: Variant("ay", v) for k, v in data.items()}


class Advertisement(ServiceInterface):
    """A connectable, discoverable LE advertisement (Type "peripheral")."""

    def __init__(self, local_name: str, service_uuids: list[str],
                 manufacturer_data: Optional[dict[int, bytes]] = None,
                 service_data: Optional[dict[str, bytes]] = None):
        super().__init__("org.bluez.LEAdvertisement1")
        self.local_name = local_name
        self.service_uuids = service_uuids
        self.manufacturer_data = manufacturer_data or {}
        self.service_data = service_data or {}

    def rename(self, name: str) -> None:
        self.local_name = name
        self.emit_properties_changed({"LocalName": name})

    @dbus_method()
    def Release(self) -> None:
        pass

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self.local_name

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return self.service_uuids

    @dbus_property(access=PropertyAccess.READ)
    def Discoverable(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def ManufacturerData(self) -> "a{qv}":
        return byte_variants(self.manufacturer_data)

    @dbus_property(access=PropertyAccess.READ)
    def ServiceData(self) -> "a{sv}":
        return byte_variants(self.service_data)


class Service(ServiceInterface):

    def __init__(self, path: str, uuid: str, primary: bool = True):
        super().__init__("org.bluez.GattService1")
        self.path = path
        self.uuid = uuid
        self.primary = primary
        self.includes: list[str] = []   # object paths of included services

    @dbus_property(access=PropertyAccess.READ)
    def Includes(self) -> "ao":
        return self.includes

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return self.primary


WriteHandler = Callable[[bytes, dict], Awaitable[None]]


class Characteristic(ServiceInterface):
    """A characteristic whose value lives here; notify = emit PropertiesChanged(Value)."""

    def __init__(self, path: str, service: Service, uuid: str, flags: list[str],
                 value: bytes = b"", on_write: Optional[WriteHandler] = None):
        super().__init__("org.bluez.GattCharacteristic1")
        self.path = path
        self.service = service
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.on_write = on_write
        self.notifying = False
        # Send the current value as soon as a central enables notifications
        # (its CCCD write), as many locks do with their state.
        self.notify_on_subscribe = False
        self.confirms = 0
        self.writes = 0

    def set_value(self, value: bytes, notify: bool = True) -> None:
        self.value = bytes(value)
        if notify:
            self.emit_properties_changed({"Value": self.value})

    @dbus_method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        if "read" not in self.flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Read not permitted")
        offset = options.get("offset", Variant("q", 0)).value
        return self.value[offset:]

    @dbus_method()
    async def WriteValue(self, value: "ay", options: "a{sv}") -> None:
        if "write" not in self.flags and "write-without-response" not in self.flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        self.writes += 1
        if self.on_write is not None:
            await self.on_write(bytes(value), options)
        else:
            self.value = bytes(value)

    @dbus_method()
    def StartNotify(self) -> None:
        if "notify" not in self.flags and "indicate" not in self.flags:
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        self.notifying = True
        if self.notify_on_subscribe:
            self.emit_properties_changed({"Value": self.value})

    @dbus_method()
    def StopNotify(self) -> None:
        self.notifying = False

    @dbus_method()
    def Confirm(self) -> None:
        self.confirms += 1

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return self.service.path

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value


class Descriptor(ServiceInterface):
    """A descriptor whose value lives here (read, and write when its flags say so)."""

    def __init__(self, path: str, characteristic: "Characteristic", uuid: str, flags: list[str], value: bytes = b""):
        super().__init__("org.bluez.GattDescriptor1")
        self.path = path
        self.characteristic = characteristic
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.writes = 0

    @dbus_method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        if "read" not in self.flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Read not permitted")
        offset = options.get("offset", Variant("q", 0)).value
        return self.value[offset:]

    @dbus_method()
    def WriteValue(self, value: "ay", options: "a{sv}") -> None:
        if "write" not in self.flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        self.writes += 1
        self.value = bytes(value)

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Characteristic(self) -> "o":
        return self.characteristic.path

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value
