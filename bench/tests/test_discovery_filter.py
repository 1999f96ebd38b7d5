"""Unit tests of the discovery-filter rules (pure logic, no bus)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from relinkbench.zoo.discovery_filter import DiscoveryFilter  # noqa: E402
from bluezoo.exceptions import DBusBluezInvalidArgumentsError  # noqa: E402

HR = "0000180d-0000-1000-8000-00805f9b34fb"


def test_short_uuids_match_full_ones():
    f = DiscoveryFilter.parse({"UUIDs": ("as", ["180d"])})
    assert f.matches("00:00:00:00:00:03", "HRM", [HR], -60, None)
    assert not f.matches("00:00:00:00:00:02", "RLK", ["8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"], -60, None)
    assert not f.matches("00:00:00:00:00:04", "X", [], -60, None)


def test_rssi_and_pathloss_thresholds():
    f = DiscoveryFilter.parse({"RSSI": ("n", -70)})
    assert f.matches("A", None, [], -70, None) and not f.matches("A", None, [], -71, None)
    assert f.wants_every_rssi
    p = DiscoveryFilter.parse({"Pathloss": ("q", 60)})
    assert p.matches("A", None, [], -50, 4)        # pathloss 54
    assert not p.matches("A", None, [], -70, 4)    # pathloss 74
    assert not p.matches("A", None, [], -50, None)  # no TX power: no pathloss


def test_pattern_is_a_prefix_of_address_or_name():
    f = DiscoveryFilter.parse({"Pattern": ("s", "RLK")})
    assert f.matches("00:00:00:00:00:02", "RLK-7F3A", [], -60, None)
    assert not f.matches("00:00:00:00:00:03", "HRM-2C41", [], -60, None)
    a = DiscoveryFilter.parse({"Pattern": ("s", "00:00:00:00:00:03")})
    assert a.matches("00:00:00:00:00:03", None, [], -60, None)


def test_bredr_only_reports_no_le_device():
    f = DiscoveryFilter.parse({"Transport": ("s", "bredr")})
    assert not f.matches("A", None, [], -60, None)


@pytest.mark.parametrize("bad", [
    {"Foo": ("b", True)},
    {"UUIDs": ("s", "180d")},
    {"UUIDs": ("as", ["not-a-uuid"])},
    {"RSSI": ("n", 50)},
    {"RSSI": ("n", -60), "Pathloss": ("q", 10)},
    {"Transport": ("s", "usb")},
    {"DuplicateData": ("s", "yes")},
])
def test_bad_filters_are_invalid_arguments(bad):
    with pytest.raises(DBusBluezInvalidArgumentsError):
        DiscoveryFilter.parse(bad)
