"""Fixtures for the end-to-end tests: a bench (lock + band) per module from
bench/tests, relinkd (the real binary) with a fresh store per test, and
cleanup of every client process a test started."""

import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
BENCH = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(BENCH, "tests"))
sys.path.insert(0, BENCH)   # relinkbench (the bench's bus configuration)
from benchproc import BenchProcess  # noqa: E402
from e2e_harness import Caller, LockClient, Relinkd  # noqa: E402
from pbench_fixtures import Hub, start_bench  # noqa: E402


def disconnect_all(bench) -> None:
    """BlueZ keeps a link when the process that made it dies: drop the
    central's links so the next test finds the peripherals advertising."""
    c = Caller(bench.bus)
    try:
        objs = c.call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", destination="org.bluez")[0]
        for path, ifaces in objs.items():
            dev = ifaces.get("org.bluez.Device1")
            if path.startswith("/org/bluez/hci0/") and dev and dev.get("Connected"):
                c.error_of(path, "org.bluez.Device1", "Disconnect", destination="org.bluez")
    finally:
        c.close()


@pytest.fixture(scope="module")
def bench():
    b = BenchProcess("--lock", "lock", "--band", "band")
    yield b
    b.stop()


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="relink-e2e-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def relinkd(bench, workdir):
    """A started relinkd with an empty store in workdir/state."""
    d = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log"))
    d.start()
    yield d
    d.kill9()
    disconnect_all(bench)


@pytest.fixture
def root(bench):
    """A root (the test's own UID) connection to the bench's bus."""
    c = Caller(bench.bus)
    yield c
    c.close()


@pytest.fixture
def clients():
    """Starts lock clients; kills those still running at the end."""
    started: list[LockClient] = []

    def start(*args, **kwargs) -> LockClient:
        c = LockClient(*args, **kwargs)
        started.append(c)
        return c
    yield start
    for c in started:
        c.kill9()


@pytest.fixture(scope="module")
def pbench():
    """A bench for relinkd's peripheral role (issue 23): hci0 for relinkd,
    a program-less adapter for the remote central."""
    b = start_bench()
    yield b
    b.stop()


@pytest.fixture
def hub(pbench):
    """relinkd with a fresh store, the hub published and advertised by a
    program, and the remote central (pbench_fixtures.Hub)."""
    h = Hub(pbench)
    yield h
    h.close()
