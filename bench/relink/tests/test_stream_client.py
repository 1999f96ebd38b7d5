"""stream_client.py's tally: each band value counted by link, with the
counters that show a lost or doubled value (no bus here).

  .venv/bin/python -m pytest bench/relink/tests/test_stream_client.py
"""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import stream_client  # noqa: E402


def band(counter: int) -> bytes:
    return struct.pack("<BBI", 0, 60, counter)   # relinkbench/peripheral/band.py's encoding


def test_values_are_tallied_by_link_with_first_last_and_doubles():
    tally = stream_client.Tally()
    for c in (5, 6, 6, 8):
        tally.add("a", band(c))
    tally.add("b", band(1))
    report = tally.report()
    assert report["values"] == 5
    assert report["links"]["a"] == {"count": 4, "distinct": 3, "first": 5, "last": 8}
    assert report["links"]["b"] == {"count": 1, "distinct": 1, "first": 1, "last": 1}


def test_a_value_that_is_not_a_band_measurement_is_not_counted():
    tally = stream_client.Tally()
    tally.add("a", b"\x01\x02")
    report = tally.report()
    assert report["values"] == 0 and report["links"] == {}


def test_relinkd_events_are_keyed_by_their_peripheral():
    tally = stream_client.Tally()
    counter = stream_client.RelinkdCounter.__new__(stream_client.RelinkdCounter)
    counter.tally = tally
    payload = '{"valueNotified": {"peripheral": {"uuid": "P-1"}, "value": [0, 60, 7, 0, 0, 0]}}'
    counter.taken("value-notified", payload)
    counter.taken("disconnected", "{}")
    counter.taken("value-notified", "not json")
    assert tally.report()["links"] == {"P-1": {"count": 1, "distinct": 1, "first": 7, "last": 7}}
