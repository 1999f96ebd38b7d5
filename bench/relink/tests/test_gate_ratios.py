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
