"""Advertising data on real bluetoothd, inside the VM or a gateway (issue 22
item 3, gateway finding G5): the bench's broadcast-only beacon (an iBeacon
frame, Eddystone service data, appearance; Type `broadcast`, no flags) on
hci1, relinkd on hci0 scanning for iBeacons only
(`--manufacturer-data 0x004c:0215`). relinkd's `discovered` event must carry
the frame as the beacon sends it, and a changed frame (`set_beacon`) must
be news. What bluetoothd made of the advertisement (its registration, the
Device1 hci0 saw) is recorded in LOGDIR/beacon.json before the test asserts.
Run by bench/gateway/tests/test_roles.py."""

import json
import os
import struct
import time
import uuid

import pytest

from realenv import IN_GUEST, LOGDIR, Relinkd, bluez_get, ctl, ctl_ok, start_bench, stop_bench, wait_for

pytestmark = pytest.mark.skipif(not IN_GUEST, reason="runs inside the real-BlueZ VM or a gateway")

ID = "beacons"
APPLE = 0x004C


def ibeacon(event: dict):
    """(proximity UUID, major, minor, power) of a discovered event's iBeacon frame, or None."""
    ad = ((event.get("payload") or {}).get("discovered") or {}).get("advertisement") or {}
    data = ad.get("manufacturerData") or []  # company, bytes, company, bytes ...
    frame = bytes(dict(zip(data[::2], data[1::2])).get(APPLE) or [])
    if frame[:2] != b"\x02\x15" or len(frame) != 23:
        return None
    major, minor, power = struct.unpack(">HHb", frame[18:23])
    return uuid.UUID(bytes=frame[2:18]), major, minor, power


def discovered() -> list[dict]:
    status, out, _ = ctl("--json", "events", ID)
    return [e for e in json.loads(out).get("events", []) if e.get("kind") == "discovered"] if status == 0 else []


def test_the_beacons_frame_reaches_relinkd_and_a_change_is_news():
    figures: dict = {}
    bench = start_bench("--beacon", "beacon")
    relinkd = Relinkd()
    try:
        state = bench.cmd("get", peripheral="beacon")
        figures["beacon"] = state
        figures["hci1_active_advertisements"] = bluez_get("/org/bluez/hci1", "org.bluez.LEAdvertisingManager1",
                                                          "ActiveInstances")
        relinkd.start()
        ctl_ok("register", ID)
        t = time.monotonic()
        ctl_ok("scan", ID, "--manufacturer-data", "0x004c:0215")
        try:
            wait_for(lambda: any(ibeacon(e) for e in discovered()), 60, "the beacon discovered", interval=1)
        finally:
            figures["discovered"] = discovered()[:3]
            figures["first_s"] = round(time.monotonic() - t, 2)
        first = next(ibeacon(e) for e in discovered() if ibeacon(e))
        assert first == (uuid.UUID(state["proximity_uuid"]), state["major"], state["minor"], state["power"]), figures

        bench.cmd("set_beacon", peripheral="beacon", minor=state["minor"] + 1)
        t = time.monotonic()
        wait_for(lambda: any((ibeacon(e) or (0, 0, 0))[2] == state["minor"] + 1 for e in discovered()), 60,
                 "the changed frame discovered", interval=1)
        figures["changed_s"] = round(time.monotonic() - t, 2)
    finally:
        with open(os.path.join(LOGDIR, "beacon.json"), "w") as f:
            json.dump(figures, f, indent=1)
        relinkd.stop()
        stop_bench(bench)
