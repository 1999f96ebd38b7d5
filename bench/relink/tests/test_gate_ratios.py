"""The gate's ratios (bench/relink/gate.py), from figures given by hand: no
bench, no time measured here. The restore bounds take medians at the
largest N, not fitted slopes: a peer that restored 16 links no slower than
4 (seen in a CI-like run: slope -0.03 ms per link) no longer fails a
relinkd that restores linearly, and a relinkd that grows quadratically
still fails.

  .venv/bin/python -m pytest bench/relink/tests/test_gate_ratios.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import gate  # noqa: E402

LINKS = [1, 4, 16]


def restore(relinkd_ms, peer_ms):
    def figures(ms):
        return {f"restore_{n}": [m / 1000] * 3 for n, m in zip(LINKS, ms)}
    return {gate.RELINKD: figures(relinkd_ms), gate.PEER: figures(peer_ms)}


def restore_failures(relinkd_ms, peer_ms):
    r, _ = gate.ratios(restore(relinkd_ms, peer_ms), {}, LINKS)
    return r, [f for f in gate.judge(r) if f.startswith("restore_")]


def test_a_flat_peer_no_longer_fails_a_linear_relinkd():
    r, failures = restore_failures([52.6, 74.6, 130.8], [195.2, 246.0, 211.7])   # the CI-like run's medians
    assert failures == [], failures
    assert round(r["restore_largest_n_ratio"], 2) == 0.62 and round(r["restore_growth"], 2) == 2.49


def test_a_quadratic_relinkd_fails_its_growth_bound():
    quadratic = [50 + 1.2 * n * n for n in LINKS]   # 51.2, 69.2, 357.2 ms
    r, failures = restore_failures(quadratic, [150.0, 190.0, 400.0])
    assert r["restore_growth"] > 5 and any(f.startswith("restore_growth") for f in failures), failures


def test_a_relinkd_slower_than_the_peer_at_the_largest_n_fails():
    r, failures = restore_failures([100.0, 140.0, 240.0], [90.0, 110.0, 200.0])
    assert any(f.startswith("restore_largest_n_ratio") for f in failures), failures


def test_a_missing_restore_figure_is_a_failure():
    r, _ = gate.ratios({gate.RELINKD: {}, gate.PEER: {}}, {}, LINKS)
    assert any(f.startswith("restore_largest_n_ratio: not measured") for f in gate.judge(r))


def stream_run(cpu_us, lost=0, behind=0):
    return {"values": 8000, "seconds": 10.0, "values_per_s": 800.0, "offered_per_s": 800.0, "cpu_s": cpu_us * 8000 / 1e6,
            "cpu_us_per_value": cpu_us, "agent_cpu_share": 0.5, "machine_busy": 0.6, "lost": lost, "doubled": 0,
            "links_behind_after_drain": behind, "values_checked": 8000}


def stream_failures(stream):
    r, lines = gate.stream_ratios(stream)
    return r, lines, [f for f in gate.judge(r) if f.startswith("stream_")]


def test_streaming_within_its_bounds_passes():
    r, lines, failures = stream_failures({"relay": [stream_run(52.8)], "relay-durable": [stream_run(246.9)],
                                          "relinkd": [stream_run(941.0)]})
    assert failures == [], failures
    assert round(r["stream_cpu_per_value_ratio"], 2) == 3.81 and r["stream_values_lost"] == 0
    assert any("relinkd: 800 values/s, 941.0 us CPU" in line for line in lines), lines
    assert any("plain relay, CPU per value: 17.82" in line for line in lines), lines


def test_streaming_that_grew_a_thunk_per_call_fails():
    # 20 links before the object filter was boxed: 1,914 us per value (the durable relay: about 250).
    r, _, failures = stream_failures({"relay-durable": [stream_run(246.9)], "relinkd": [stream_run(1914.0)]})
    assert any(f.startswith("stream_cpu_per_value_ratio") for f in failures), failures


def test_the_plain_relay_alone_does_not_gate():
    r, _, failures = stream_failures({"relay": [stream_run(40)], "relinkd": [stream_run(700)]})
    assert "stream_cpu_per_value_ratio" not in r
    assert any(f.startswith("stream_cpu_per_value_ratio: not measured") for f in failures), failures


def test_a_lost_value_or_a_link_still_behind_after_the_drain_fails():
    for run in (stream_run(700, lost=1), stream_run(700, behind=1)):
        _, _, failures = stream_failures({"relay-durable": [stream_run(250)], "relinkd": [run]})
        assert any(f.startswith("stream_values_lost") for f in failures), failures


def test_a_failed_streaming_run_is_not_measured():
    r, lines, failures = stream_failures({"relay-durable": [stream_run(250)],
                                          "relinkd": [{"error": "no value from 3 links"}]})
    assert any(f.startswith("stream_cpu_per_value_ratio: not measured") for f in failures), failures
    assert any("FAILED no value from 3 links" in line for line in lines), lines
