"""Pure helpers of the scale benchmark (bench/relink/scale_bench.py).

  .venv/bin/python -m pytest bench/relink/tests/test_scale_bench.py
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import scale_bench  # noqa: E402


def test_absent_addresses_are_distinct_and_never_a_bench_peripherals():
    addresses = [scale_bench.absent_address(n) for n in range(5000)]
    assert len(set(addresses)) == 5000
    assert all(a.startswith("10:00:00:") and len(a) == 17 for a in addresses)
    assert scale_bench.absent_address(0x0102) == "10:00:00:00:01:02"


def test_the_longest_gap_counts_the_window_edges_and_says_when_no_ping_came():
    assert scale_bench.longest_gap([1.0, 2.0, 3.5], 0.5, 4.0) == (pytest.approx(1.5), False)
    assert scale_bench.longest_gap([0.1, 9.0], 1.0, 5.0) == (pytest.approx(4.0), True)
    assert scale_bench.longest_gap([], 1.0, 3.0) == (pytest.approx(2.0), True)
