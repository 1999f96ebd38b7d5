"""BlueZ's own GAP service (0x1800) on every adapter.

bluetoothd (src/gatt-database.c) serves the GAP service itself, with the
adapter's name (its Alias) as Device Name 0x2A00, and refuses an application
that exports 0x1800 or 0x1801 (`parse_uuid`: "GAP service must be handled by
BlueZ"; RegisterApplication fails with Failed "Failed to create entry in
database"). These objects stand in for a peripheral-side GATT application's
client objects, so the central's links (gatt_links.py) treat the adapter's
GAP service like any other. Handles 1 and 2 are reserved for them."""

from typing import Any, Optional

from bluezoo.exceptions import DBusBluezNotPermittedError, DBusBluezNotSupportedError
from bluezoo.utils import BluetoothUUID

GAP_SERVICE = BluetoothUUID("1800")
GATT_SERVICE = BluetoothUUID("1801")
GAP_DEVICE_NAME = BluetoothUUID("2a00")
# Handles bluetoothd's own services take before any application's.
RESERVED_HANDLES = 2
REFUSED_SERVICES = (GAP_SERVICE, GATT_SERVICE)


class _Prop:
    """The part of an sdbus client property the links use: get() and cache()."""

    def __init__(self, value: Any):
        self.value = value

    def get(self, default: Any = None) -> Any:
        return default if self.value is None else self.value

    def cache(self, value: Any) -> None:
        self.value = value


class GapServiceObject:
    gatt_kind = "service"

    def __init__(self, path: str):
        self.path = path
        self.UUID = _Prop(str(GAP_SERVICE))
        self.Primary = _Prop(True)
        self.Includes = _Prop([])
        self.Handle = _Prop(1)

    def get_object_path(self) -> str:
        return self.path


class GapDeviceNameObject:
    gatt_kind = "characteristic"

    def __init__(self, path: str, service: GapServiceObject, adapter):
        self.path = path
        self.adapter = adapter
        self.UUID = _Prop(str(GAP_DEVICE_NAME))
        self.Service = _Prop(service.path)
        self.Handle = _Prop(2)
        self.Flags = _Prop(["read"])
        self.Value = _Prop(None)
        self.Notifying = _Prop(False)
        self.WriteAcquired = _Prop(False)
        self.NotifyAcquired = _Prop(False)
        self.MTU = _Prop(None)

    def get_object_path(self) -> str:
        return self.path

    async def ReadValue(self, options: dict) -> bytes:
        value = self.adapter.name.encode()
        offset = options.get("offset", ("q", 0))
        return value[offset[1] if isinstance(offset, tuple) else offset:]

    async def WriteValue(self, value: bytes, options: dict) -> None:
        raise DBusBluezNotPermittedError("Write not permitted")

    async def StartNotify(self) -> None:
        raise DBusBluezNotSupportedError("Operation is not supported")

    async def StopNotify(self) -> None:
        pass

    async def Confirm(self) -> None:
        pass


class GapDatabase:
    """The adapter's GAP service as an application-like object (`.objects`)."""

    def __init__(self, adapter):
        root = f"{adapter.get_object_path()}/bluez_gap"
        service = GapServiceObject(f"{root}/service0001")
        name = GapDeviceNameObject(f"{service.path}/char0002", service, adapter)
        self.objects = {service.path: service, name.path: name}


def refused_service(managed: dict) -> Optional[str]:
    """The UUID of a GattService1 that bluetoothd keeps for itself (0x1800,
    0x1801) in a GetManagedObjects reply, or None."""
    for interfaces in managed.values():
        props = interfaces.get("org.bluez.GattService1")
        if props is None:
            continue
        value = props.get("UUID")
        if isinstance(value, tuple) and len(value) == 2:
            value = value[1]
        try:
            uuid = BluetoothUUID(value)
        except Exception:
            continue
        if uuid in REFUSED_SERVICES:
            return str(uuid)
    return None
