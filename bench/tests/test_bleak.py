"""The "Done when" scenarios with bleak 3.1.0 (+ bleak-retry-connector) as a
third-party client. Each scenario runs in its own Python process with
DBUS_SYSTEM_BUS_ADDRESS pointing at the bench's private bus."""

import json
import os
import subprocess
import sys

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bleak_scenario.py")


def scenario(bench, name: str) -> dict:
    p = subprocess.run([sys.executable, SCENARIO, name, bench.dir, json.dumps(bench.info)],
                       env=bench.env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_bleak_discovers_lock_and_band_and_filters_by_uuid(fresh_bench):
    bench = fresh_bench()
    r = scenario(bench, "discover")
    lock, band = bench.address("lock"), bench.address("band")
    assert r["all"] == {lock: "RLK-7F3A", band: "HRM-2C41"}
    assert r["heart_rate"] == [band]
    assert "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b" in r["uuids"][lock]
    assert all(-70 <= v <= -50 for v in r["rssi"].values()), r["rssi"]


def test_b_bleak_connects_reads_gap_name_and_state_and_gets_notifications(bench):
    r = scenario(bench, "connect")
    assert r["scan_name"] == "RLK-7F3A"
    assert r["gap_name"] == "Front Door"
    assert r["state"] in ("locked", "unlocked")
    assert r["notifications"][:3] == ["unlocked", "locked", "unlocked"]
    c = r["band_counters"]
    assert len(c) >= 2 and c == list(range(c[0], c[0] + len(c)))


def test_c_bleak_out_of_range_drop_failed_connect_and_retry_connector_back(bench):
    r = scenario(bench, "out_of_range")
    assert r["connected"] is True
    assert r["connected_after_drop"] is False
    assert r["drop_seconds"] < 5
    # bleak retries BlueZ's Failed "le-connection-abort-by-local" (see
    # bleak/backends/bluezdbus/client.py) until its own 3 s timeout.
    assert r["reconnect_while_away"] in ("timeout",
                                         ["org.bluez.Error.Failed", "le-connection-abort-by-local"])
    assert r["away_seconds"] >= 1.0
    assert r["reconnected"] is True
    assert r["state"] in ("locked", "unlocked")
