"""The bench's pairing counter (issue 24, cmatrix; an instrument, not a
change of behaviour): every Device1.Pair call is counted, and the count
outlives a bluetoothd restart.

BlueZoo counts nothing. BlueZ logs each pairing (and btmon shows its SMP
exchange), which is how one sees on a real gateway whether a program
paired a device again. Here `pair_calls.json` in the bench directory holds,
per central adapter and peer address, how many times a client called
`Device1.Pair` (successful, refused and already-paired calls alike), so a
test can tell that a bonded lock was never paired again across every
restart kind, a BlueZoo restart included; `Zoo1.GetState` shows it
(`pair_calls`: adapter address -> peer address -> calls)."""

import json
import os

_path = None


def use_directory(directory: str) -> None:
    global _path
    _path = os.path.join(directory, "pair_calls.json")


def load() -> dict:
    """adapter address -> peer address -> Device1.Pair calls."""
    if _path is None or not os.path.exists(_path):
        return {}
    with open(_path) as f:
        return json.load(f)


def count(adapter: str, peer: str) -> None:
    if _path is None:
        return
    calls = load()
    per_adapter = calls.setdefault(adapter.upper(), {})
    per_adapter[peer.upper()] = per_adapter.get(peer.upper(), 0) + 1
    tmp = _path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(calls, f)
    os.replace(tmp, _path)
