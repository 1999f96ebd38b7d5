"""Advertising data through relinkd (issue 22 item 3), with the real relinkd
on a bench with a lock, a band and a broadcast-only beacon: a scan filtered
by a manufacturer-data prefix finds the beacon and not the lock or the band,
and its `discovered` event carries the iBeacon frame whole (decoded here as a
program would); a changed payload is a new event; the filter is part of the
stored intent (it survives a relinkd SIGKILL); a prefix longer than any
advertisement carries is refused with InvalidArguments."""

import struct
import uuid

import pytest
from dbus_fast import Variant

from benchproc import BenchProcess
from e2e_harness import CENTRAL, MANAGER, central_path, wait_until

BEACON = "00:00:00:00:00:04"
EDDYSTONE = "0000feaa-0000-1000-8000-00805f9b34fb"
IBEACON_PREFIX = Variant("a(qayay)", [[0x004C, b"\x02\x15", b""]])


@pytest.fixture(scope="module")
def bench():
    b = BenchProcess("--lock", "lock", "--band", "band", "--beacon", "beacon")
    yield b
    b.stop()


def ibeacon(advertisement: dict):
    """(proximity UUID, major, minor, power) of an iBeacon frame in a
    `discovered` event's advertisement, else None."""
    data = advertisement["manufacturerData"]
    frames = dict(zip(data[::2], data[1::2]))
    frame = bytes(frames.get(0x004C, b""))
    if len(frame) != 23 or frame[:2] != b"\x02\x15":
        return None
    major, minor, power = struct.unpack(">HHb", frame[18:])
    return uuid.UUID(bytes=frame[2:18]), major, minor, power


def discoveries(root, identifier):
    return [p["discovered"]["advertisement"] for _, kind, p in root.events(identifier) if kind == "discovered"]


def test_a_manufacturer_prefix_scan_finds_the_beacon_decodes_it_and_a_changed_payload_is_news(bench, relinkd, root):
    root.call("/org/relink", MANAGER, "Register", "sa{sv}", ["beacons", {}])
    root.call(central_path("beacons"), CENTRAL, "Scan", "asa{sv}", [[], {"manufacturer_data": IBEACON_PREFIX}])
    wait_until(lambda: discoveries(root, "beacons"), 30, "the beacon discovered")
    first = discoveries(root, "beacons")[0]
    state = bench.cmd("get", peripheral="beacon")
    assert first["address"]["address"] == BEACON
    assert ibeacon(first) == (uuid.UUID(state["proximity_uuid"]), state["major"], state["minor"], state["power"])
    assert first["serviceData"] == {EDDYSTONE: list(bytes.fromhex(state["service_data"][EDDYSTONE]))}
    # A broadcaster sets no Flags (patch 32; bluetoothd refuses a broadcast
    # advertisement with the discoverable flag, gateway finding G5).
    assert first["txPower"] == -8 and first["appearance"] == 0x0200 and "flags" not in first, first

    bench.cmd("set_beacon", peripheral="beacon", minor=state["minor"] + 1)
    wait_until(lambda: any(ibeacon(a)[2] == state["minor"] + 1 for a in discoveries(root, "beacons")), 30,
               "the changed payload discovered")
    found = discoveries(root, "beacons")
    assert {a["address"]["address"] for a in found} == {BEACON}, "the lock and the band do not match the prefix"
    # Without allow_duplicates the same payload is not news: one event per payload.
    minors = [ibeacon(a)[2] for a in found]
    assert minors == sorted(set(minors)), minors


def test_the_filter_survives_a_relinkd_sigkill(bench, relinkd, root):
    root.call("/org/relink", MANAGER, "Register", "sa{sv}", ["kept", {}])
    eddystone = Variant("a(sayay)", [[EDDYSTONE, b"\x20\x00", b""]])
    root.call(central_path("kept"), CENTRAL, "Scan", "asa{sv}", [[], {"manufacturer_data": IBEACON_PREFIX,
                                                                      "service_data": eddystone}])
    wait_until(lambda: discoveries(root, "kept"), 30, "the beacon discovered")
    relinkd.kill9()
    relinkd.start()
    options = root.central("kept", "ScanOptions")
    assert [list(x) for x in options["manufacturer_data"]] == [[0x004C, b"\x02\x15", b""]]
    assert [list(x) for x in options["service_data"]] == [[EDDYSTONE, b"\x20\x00", b""]]
    before = len(discoveries(root, "kept"))
    minor = bench.cmd("get", peripheral="beacon")["minor"] + 1
    bench.cmd("set_beacon", peripheral="beacon", minor=minor)
    wait_until(lambda: any(ibeacon(a)[2] == minor for a in discoveries(root, "kept")[before:]), 30,
               "the beacon discovered after the restart")
    assert {a["address"]["address"] for a in discoveries(root, "kept")} == {BEACON}


def test_a_prefix_longer_than_any_advertisement_is_refused(bench, relinkd, root):
    root.call("/org/relink", MANAGER, "Register", "sa{sv}", ["bad", {}])
    too_long = Variant("a(qayay)", [[0x004C, bytes(253), b""]])
    error = root.error_of(central_path("bad"), CENTRAL, "Scan", "asa{sv}", [[], {"manufacturer_data": too_long}])
    assert error is not None and error.startswith("org.relink.Error.InvalidArguments"), error
    assert root.central("bad", "Scanning") is False
    mask = Variant("a(sayay)", [[EDDYSTONE, b"\x20\x00", b"\xff"]])
    error = root.error_of(central_path("bad"), CENTRAL, "Connect", "sa{sv}", [BEACON, {"match_service_data": mask}])
    assert error is not None and error.startswith("org.relink.Error.InvalidArguments"), error
