"""Patch 23 (issue 24, pair2): bonds outlive a bluetoothd restart; patch 28
(issue 24, cmatrix): so does `Trusted`.

BlueZoo keeps pairings and trust in memory only: a restarted BlueZoo has
forgotten every bond and every trusted device. BlueZ stores a bond's keys,
and a device's `Trusted`, in /var/lib/bluetooth/<adapter>/<device>/info
and loads them at start, so a bonded device comes back Paired, Bonded and
Trusted and its link is encrypted again without a new pairing
(docs/real-bluez.md, "Third probe": bonds survive a bluetoothd restart);
`Adapter1.RemoveDevice` deletes them. Here: the bench directory's
`bonds.json` holds each adapter's bonded peers, written when a pairing
completes, and `trusted.json` its trusted ones, written when `Trusted` is
set; both are read as a device is added to an adapter and cleared by
RemoveDevice."""

import json
import os

_directory = None


def use_directory(directory: str) -> None:
    global _directory
    _directory = directory


class _PairSet:
    """A set of (adapter address, peer address) kept in one JSON file of the bench directory."""

    def __init__(self, name: str):
        self.name = name

    def _path(self):
        return None if _directory is None else os.path.join(_directory, self.name)

    def load(self) -> set:
        path = self._path()
        if path is None or not os.path.exists(path):
            return set()
        with open(path) as f:
            return {tuple(pair) for pair in json.load(f)}

    def save(self, pairs: set) -> None:
        path = self._path()
        if path is None:
            return
        with open(path + ".tmp", "w") as f:
            json.dump(sorted(pairs), f)
        os.replace(path + ".tmp", path)

    def set(self, adapter: str, peer: str, on: bool) -> None:
        pair = (adapter.upper(), peer.upper())
        self.save(self.load() | {pair} if on else self.load() - {pair})

    def contains(self, adapter: str, peer: str) -> bool:
        return (adapter.upper(), peer.upper()) in self.load()


_bonds = _PairSet("bonds.json")
_trusted = _PairSet("trusted.json")


def remember(adapter: str, peer: str) -> None:
    _bonds.set(adapter, peer, True)


def forget(adapter: str, peer: str) -> None:
    """RemoveDevice: the keys and the trust go."""
    _bonds.set(adapter, peer, False)
    _trusted.set(adapter, peer, False)


def bonded(adapter: str, peer: str) -> bool:
    return _bonds.contains(adapter, peer)


def set_trusted(adapter: str, peer: str, on: bool) -> None:
    _trusted.set(adapter, peer, on)


def trusted(adapter: str, peer: str) -> bool:
    return _trusted.contains(adapter, peer)
