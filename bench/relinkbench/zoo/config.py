"""Run-time settings of the patched BlueZoo (set from the command line, changed
over the org.relinkbench.Zoo1 interface)."""

import random
from dataclasses import dataclass, field


@dataclass
class RssiModel:
    """Per-peripheral RSSI: a base value plus uniform noise of +/- noise dBm."""
    base: int = -60
    noise: int = 3

    def sample(self, rng: random.Random) -> int:
        value = self.base + rng.randint(-self.noise, self.noise) if self.noise > 0 else self.base
        return max(-127, min(20, value))


@dataclass
class ZooConfig:
    scan_interval: float = 0.2
    # How long Connect keeps trying to reach an absent peer before it fails with
    # org.bluez.Error.Failed "le-connection-abort-by-local" (the kernel: 20 s).
    connect_timeout: float = 1.0
    # How long after the peer vanishes the central notices (LE supervision timeout).
    supervision_timeout: float = 0.5
    # "exported" (BlueZ >= 5.80) or "hidden" (BlueZ <= 5.79): the GAP service 0x1800.
    gap_service: str = "exported"
    # RSSI PropertiesChanged only on a change of at least this much, unless a
    # discovery filter has RSSI or Pathloss (BlueZ: RSSI_THRESHOLD 8).
    rssi_threshold: int = 8
    # A device found by discovery and never connected is removed this long
    # after its last advertisement (BlueZ's TemporaryTimeout); 0: never.
    temporary_timeout: float = 30.0
    # Advertisements each adapter's controller sends at once (patch 24; BlueZoo: 15).
    advertising_instances: int = 15
    rssi: dict[str, RssiModel] = field(default_factory=dict)
    # Adapters (by address, upper case) that come up powered off: the world
    # outside bluetoothd (a peripheral out of range, a central switched off)
    # does not change when it restarts (issue 20 finding 9).
    unpowered: set[str] = field(default_factory=set)
    # Patch 26: what a peripheral adapter (by address, upper case) demands of
    # the central's agent to pair: ("just-works"|"confirmation"|"passkey", passkey).
    pairing: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Patch 27: peripheral adapters with privacy on (identity address, upper
    # case) -> the resolvable private address they advertise from now.
    privacy: dict[str, str] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)

    def rssi_for(self, address: str) -> int:
        return self.rssi.setdefault(address.upper(), RssiModel()).sample(self.rng)


CONFIG = ZooConfig()
