import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # relinkbench
from benchproc import BenchProcess, Bluetoothctl  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    """One bench (lock + band) per test module."""
    b = BenchProcess()
    yield b
    b.stop()


@pytest.fixture
def fresh_bench():
    """A bench of its own for one test."""
    benches = []

    def make(*args):
        b = BenchProcess(*args)
        benches.append(b)
        return b
    yield make
    for b in benches:
        b.stop()


@pytest.fixture
def btctl(bench):
    ctl = Bluetoothctl(bench)
    yield ctl
    ctl.close()
