"""The beacon: a broadcast-only peripheral (issue 22 item 3). It advertises
an iBeacon frame (Apple's manufacturer data, company 0x004C, type 0x02,
length 0x15: proximity UUID, major, minor, measured power) and Eddystone
service data (0xFEAA), a TX power and an appearance; its advertisement is
of Type "broadcast" (non-connectable: a central cannot connect to it), with
no Discoverable (a broadcaster may not set the discoverable flags, and
bluetoothd refuses the advertisement whole if it does: gateway finding G5),
and it has no GATT services. `set_beacon` changes major/minor/power, so a
central sees a changed payload. All of it needs extended advertising (39
bytes, a requested TX power); on a controller with legacy advertising only
(btvirt's, on real bluetoothd) the beacon advertises the iBeacon frame
alone (`compact` in its state)."""

import struct
import sys
import uuid
from typing import Any

from dbus_fast import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property

from .base import CommandError, Peripheral
from .gatt import byte_variants

APPLE = 0x004C
EDDYSTONE = "0000feaa-0000-1000-8000-00805f9b34fb"
PROXIMITY_UUID = uuid.UUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")
TX_POWER = -8
APPEARANCE = 0x0200  # Generic Tag


def ibeacon_frame(proximity: uuid.UUID, major: int, minor: int, power: int) -> bytes:
    """The manufacturer data after the company ID."""
    return bytes([0x02, 0x15]) + proximity.bytes + struct.pack(">HHb", major, minor, power)


class IBeaconAdvertisement(ServiceInterface):
    """A broadcast (non-connectable) LE advertisement of an iBeacon frame
    alone (27 bytes): what a controller with legacy advertising only can
    send (31 bytes, no requested TX power). No name, no flags."""

    def __init__(self):
        super().__init__("org.bluez.LEAdvertisement1")
        self.manufacturer_data: dict[int, bytes] = {}
        self.service_data: dict[str, bytes] = {}
        self.local_name = ""

    def changed(self) -> None:
        self.emit_properties_changed({"ManufacturerData": byte_variants(self.manufacturer_data)})

    @dbus_method()
    def Release(self) -> None:
        pass

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "broadcast"

    @dbus_property(access=PropertyAccess.READ)
    def ManufacturerData(self) -> "a{qv}":
        return byte_variants(self.manufacturer_data)


class BeaconAdvertisement(IBeaconAdvertisement):
    """The iBeacon frame with Eddystone service data, a requested TX power
    and an appearance: 39 bytes, extended advertising."""

    def changed(self) -> None:
        self.emit_properties_changed({
            "ManufacturerData": byte_variants(self.manufacturer_data),
            "ServiceData": byte_variants(self.service_data),
        })

    @dbus_property(access=PropertyAccess.READ)
    def ServiceData(self) -> "a{sv}":
        return byte_variants(self.service_data)

    @dbus_property(access=PropertyAccess.READ)
    def TxPower(self) -> "n":
        return TX_POWER

    @dbus_property(access=PropertyAccess.READ)
    def Appearance(self) -> "q":
        return APPEARANCE


class Beacon(Peripheral):
    kind = "beacon"

    def __init__(self, name: str, adapter: str, adv_name: str, gap_name: str):
        self.major, self.minor, self.power = 1, 1, -59
        super().__init__(name, adapter, adv_name, gap_name)
        self.adv = BeaconAdvertisement()
        self._fill()

    def _fill(self) -> None:
        self.adv.manufacturer_data = {APPLE: ibeacon_frame(PROXIMITY_UUID, self.major, self.minor, self.power)}
        # An Eddystone-TLM-like frame: version 0x20 0x00, then the minor as a counter.
        self.adv.service_data = {EDDYSTONE: bytes([0x20, 0x00]) + struct.pack(">H", self.minor)}

    async def register(self) -> None:
        # Broadcast only: an advertisement and no GATT application.
        self.app_registered = True
        try:
            await super().register()
        except RuntimeError as e:
            if not isinstance(self.adv, BeaconAdvertisement):
                raise
            # Every frame at once needs 39 bytes and a requested TX power:
            # extended advertising. A controller with legacy advertising only
            # (btvirt's, under bluetoothd 5.66 and 5.82: `Failed to add
            # advertisement: Invalid Parameters`) gets the iBeacon frame
            # alone, as a single-frame iBeacon sends it (an advertisement
            # without the other properties: 5.82 refused it while it still
            # had a TX power, even "no preference").
            print(f"bench: beacon {self.name}: {e}; advertising the iBeacon frame alone", file=sys.stderr)
            compact = IBeaconAdvertisement()
            compact.manufacturer_data, compact.service_data = self.adv.manufacturer_data, self.adv.service_data
            self.bus.unexport(self.adv_path, self.adv)
            self.adv = compact
            self.bus.export(self.adv_path, self.adv)
            await super().register()

    def state(self) -> dict[str, Any]:
        return {"major": self.major, "minor": self.minor, "power": self.power, "compact": not isinstance(self.adv, BeaconAdvertisement),
                "proximity_uuid": str(PROXIMITY_UUID),
                "manufacturer_data": {f"{k:04x}": v.hex() for k, v in self.adv.manufacturer_data.items()},
                "service_data": {k: v.hex() for k, v in self.adv.service_data.items()}}

    async def command(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        if cmd == "set_beacon":
            for key, low, high in (("major", 0, 0xFFFF), ("minor", 0, 0xFFFF), ("power", -128, 127)):
                if key in args:
                    value = args[key]
                    if not isinstance(value, int) or not low <= value <= high:
                        raise CommandError(f"{key} must be an integer in {low}..{high}")
                    setattr(self, key, value)
            self._fill()
            self.adv.changed()
            return self.state()
        raise CommandError(f"unknown command {cmd!r} for a {self.kind}")
