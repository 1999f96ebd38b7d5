"""Discovery filters as real BlueZ applies them (src/adapter.c).

Each client with a discovery session may have set a filter; an advertisement
is reported when it matches the filter of at least one session (a session
without a filter matches everything).
"""

from dataclasses import dataclass, field
from typing import Any, Optional

from bluezoo.exceptions import DBusBluezInvalidArgumentsError
from bluezoo.utils import BluetoothUUID

# key -> D-Bus signature BlueZ accepts for it
KNOWN_KEYS = {
    "UUIDs": "as",
    "RSSI": "n",
    "Pathloss": "q",
    "Transport": "s",
    "DuplicateData": "b",
    "Discoverable": "b",
    "Pattern": "s",
}


@dataclass
class DiscoveryFilter:
    uuids: list[str] = field(default_factory=list)
    rssi: Optional[int] = None
    pathloss: Optional[int] = None
    transport: str = "auto"
    duplicate_data: bool = False
    discoverable: bool = False
    pattern: str = ""

    @classmethod
    def parse(cls, properties: dict[str, tuple[str, Any]]) -> "DiscoveryFilter":
        """Parse a SetDiscoveryFilter dictionary; unknown keys, wrong types or
        bad values raise org.bluez.Error.InvalidArguments as BlueZ does."""
        f = cls()
        for key, variant in properties.items():
            sig = KNOWN_KEYS.get(key)
            if sig is None or not isinstance(variant, tuple) or variant[0] != sig:
                raise DBusBluezInvalidArgumentsError("Invalid arguments in method call")
            value = variant[1]
            if key == "UUIDs":
                try:
                    f.uuids = [BluetoothUUID(x) for x in value]
                except ValueError:
                    raise DBusBluezInvalidArgumentsError("Invalid arguments in method call")
            elif key == "RSSI":
                if not -127 <= value <= 20:
                    raise DBusBluezInvalidArgumentsError("Invalid arguments in method call")
                f.rssi = value
            elif key == "Pathloss":
                if value > 137:
                    raise DBusBluezInvalidArgumentsError("Invalid arguments in method call")
                f.pathloss = value
            elif key == "Transport":
                if value not in ("auto", "bredr", "le"):
                    raise DBusBluezInvalidArgumentsError("Invalid arguments in method call")
                f.transport = value
            elif key == "DuplicateData":
                f.duplicate_data = value
            elif key == "Discoverable":
                f.discoverable = value
            elif key == "Pattern":
                f.pattern = value
        if f.rssi is not None and f.pathloss is not None:
            raise DBusBluezInvalidArgumentsError("Invalid arguments in method call")
        return f

    @property
    def wants_every_rssi(self) -> bool:
        # A filtered discovery: bluetoothd then signals RSSI on every report
        # (device_set_rssi_with_delta(dev, rssi, 0)). DuplicateData makes one
        # too (5.66: any filter does; later versions: any but an empty one).
        return self.rssi is not None or self.pathloss is not None or self.duplicate_data

    def matches(self, address: str, name: Optional[str], uuids: list[str],
                rssi: int, tx_power: Optional[int]) -> bool:
        if self.transport == "bredr":
            return False
        if self.uuids and not set(self.uuids) & {BluetoothUUID(u) for u in uuids}:
            return False
        if self.rssi is not None and rssi < self.rssi:
            return False
        if self.pathloss is not None:
            if tx_power is None or tx_power - rssi > self.pathloss:
                return False
        if self.pattern:
            if not (address.upper().startswith(self.pattern.upper())
                    or (name or "").startswith(self.pattern)):
                return False
        return True
