"""Patch 27 (issue 24, rpa): a peripheral adapter with privacy on advertises
from a resolvable private address (RPA) that changes when it rotates.

BlueZoo: every adapter advertises and is connected from its own (public)
address; a central's Device1 is named and addressed by it for ever. BlueZ
(docs/real-bluez.md, "Third probe"; src/device.c `device_update_addr`,
src/adapter.c `load_devices`): a central without the peer's IRK sees each
RPA as a new Device1 (AddressType random); pairing exchanges the IRK and
the SAME Device1 object then shows the identity address (Address and
AddressType change on its path), and later RPAs of the peer are resolved
to it (found again, connectable through it); after a bluetoothd restart the
bonded device comes back under its identity (`dev_<IDENTITY>`).

Here: adapters named with `--privacy ADDR` (`Options.lock_privacy`) take a
fresh RPA at start (a restarted bluetoothd), at each power-on and on
`Zoo1.RotateAddress`; a central resolves an RPA to the identity when it
holds a bond with it (patch 23's `bonds.json` stands for the stored IRK).
The RPA is random with the top bits 01 (its hash part is not the real
`ah()` of an IRK: nothing here checks it)."""

import random
from typing import Optional

from .config import CONFIG
from . import bonds

_rng = random.Random()


def new_rpa() -> str:
    octets = [_rng.randrange(256) for _ in range(6)]
    octets[0] = 0x40 | (octets[0] & 0x3F)   # resolvable private: top bits 01
    return ":".join(f"{o:02X}" for o in octets)


def enable(identity: str) -> None:
    """Privacy on for the adapter with this identity address."""
    CONFIG.privacy[identity.upper()] = new_rpa()


def rotate(identity: str) -> Optional[str]:
    """A new RPA for a private adapter (None: the adapter has no privacy)."""
    identity = identity.upper()
    if identity not in CONFIG.privacy:
        return None
    CONFIG.privacy[identity] = new_rpa()
    return CONFIG.privacy[identity]


def is_private(identity: str) -> bool:
    return identity.upper() in CONFIG.privacy


def air_address(adapter) -> str:
    """The address the adapter advertises and is connected at now."""
    return CONFIG.privacy.get(adapter.address.upper(), adapter.address)


def resolves(central_address: str, identity: str) -> bool:
    """The central holds the peer's IRK: it paired and bonded with it."""
    return bonds.bonded(central_address, identity)


def answers_to(adapter, address: str, central_address: Optional[str]) -> bool:
    """Whether a central reaches `adapter` at `address`: its current air
    address, or its identity when the adapter has no privacy or the
    central resolves it."""
    address = address.upper()
    if address == air_address(adapter).upper():
        return True
    if address != adapter.address.upper():
        return False
    return not is_private(adapter.address) or (central_address is not None and resolves(central_address, adapter.address))
