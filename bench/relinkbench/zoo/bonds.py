"""Patch 23 (issue 24, pair2): bonds outlive a bluetoothd restart.

BlueZoo keeps pairings in memory only: a restarted BlueZoo has forgotten
every bond. BlueZ stores a bond's keys in /var/lib/bluetooth/<adapter>/
<device>/info and loads them at start, so a bonded device comes back
Paired and Bonded and its link is encrypted again without a new pairing
(docs/real-bluez.md, "Third probe": bonds survive a bluetoothd restart);
`Adapter1.RemoveDevice` deletes them. Here: the bench directory's
`bonds.json` holds each adapter's bonded peers, written when a pairing
completes, read as a device is added to an adapter, cleared by
RemoveDevice."""

import json
import os

_path = None


def use_directory(directory: str) -> None:
    global _path
    _path = os.path.join(directory, "bonds.json")


def _load() -> set:
    if _path is None or not os.path.exists(_path):
        return set()
    with open(_path) as f:
        return {tuple(pair) for pair in json.load(f)}


def _save(bonds: set) -> None:
    if _path is None:
        return
    tmp = _path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(sorted(bonds), f)
    os.replace(tmp, _path)


def remember(adapter: str, peer: str) -> None:
    _save(_load() | {(adapter.upper(), peer.upper())})


def forget(adapter: str, peer: str) -> None:
    _save(_load() - {(adapter.upper(), peer.upper())})


def bonded(adapter: str, peer: str) -> bool:
    return (adapter.upper(), peer.upper()) in _load()
