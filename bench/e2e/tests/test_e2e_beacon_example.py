"""The Swift beacon example (examples/swift-beacon), a package of its own
that depends on relink the way a user's package does: on a bench with a
broadcast-only beacon, the lock and the band, with the real relinkd, it
scans for iBeacons only, reads the beacon's frame from `discovered` events
with the client library's decoder and prints it; a changed frame is printed
again; after relinkd is SIGKILLed and restarted, it registers again by
itself and the stored scan still finds only the beacon. The snippet of
docs/advertising.md is the example's code."""

import os
import re
import shutil
import subprocess
import textwrap
import threading
import time

import pytest

from benchproc import BenchProcess
from e2e_harness import ROOT, die_with_parent, wait_until

PACKAGE = os.path.join(ROOT, "examples", "swift-beacon")
MAIN = os.path.join(PACKAGE, "Sources", "relink-beacon", "main.swift")
DOC = os.path.join(ROOT, "docs", "advertising.md")
LINE = re.compile(r"^#(\d+) (\S+) ibeacon (\S+) major (\d+) minor (\d+) power (-?\d+) dBm rssi (\S+)$")


@pytest.fixture(scope="module")
def bench():
    b = BenchProcess("--lock", "lock", "--band", "band", "--beacon", "beacon")
    yield b
    b.stop()


@pytest.fixture(scope="module")
def binary():
    if not shutil.which("swift"):
        pytest.fail("swift is not on PATH")
    build = subprocess.run(["swift", "build", "--package-path", PACKAGE], capture_output=True, text=True, timeout=1500)
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    path = subprocess.run(["swift", "build", "--package-path", PACKAGE, "--show-bin-path"], capture_output=True,
                          text=True, check=True).stdout.strip()
    return os.path.join(path, "relink-beacon")


def test_the_docs_snippet_is_the_example_code():
    with open(MAIN) as f:
        code = textwrap.dedent(f.read().split("// readme:begin\n", 1)[1].split("// readme:end", 1)[0]).strip()
    with open(DOC) as f:
        doc = f.read().split("examples/swift-beacon/Sources/relink-beacon/main.swift", 1)[1]
    assert textwrap.dedent(doc.split("```swift\n", 1)[1].split("```", 1)[0]).strip() == code


class Program:
    def __init__(self, binary: str, bus: str):
        # As a user runs it, its output into a pipe: no stdbuf (it flushes each line itself).
        self.proc = subprocess.Popen([binary, "--bus-address", bus, "--identifier", "beacons"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=die_with_parent)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def beacons(self) -> list[re.Match]:
        return [m for m in map(LINE.match, list(self.lines)) if m]

    def dump(self) -> str:
        return "\n".join(self.lines[-30:])

    def kill9(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.reader.join(5)


def test_the_beacon_example_help_and_usage_errors(binary):
    """`--help` prints the usage on stdout and exits 0; a bad command line
    prints what is wrong and the usage on stderr and exits 2."""
    help_ = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    assert help_.returncode == 0 and help_.stdout.startswith("usage: relink-beacon") and "--identifier" in help_.stdout, help_
    bad = subprocess.run([binary, "--identifier"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "--identifier needs a value" in bad.stderr and "usage: relink-beacon" in bad.stderr, bad


def test_the_beacon_example_prints_the_frame_and_its_changes_across_a_relinkd_restart(binary, bench, relinkd):
    program = Program(binary, bench.bus)
    try:
        state = bench.cmd("get", peripheral="beacon")
        wait_until(lambda: program.beacons(), 30, "the beacon's frame printed")
        first = program.beacons()[0]
        assert first[2] == bench.address("beacon")
        assert (first[3].lower(), int(first[4]), int(first[5]), int(first[6])) == \
            (state["proximity_uuid"], state["major"], state["minor"], state["power"]), program.dump()
        bench.cmd("set_beacon", peripheral="beacon", minor=state["minor"] + 1)
        wait_until(lambda: any(int(m[5]) == state["minor"] + 1 for m in program.beacons()), 30, "the changed frame")

        relinkd.kill9()
        relinkd.start()
        bench.cmd("set_beacon", peripheral="beacon", minor=state["minor"] + 2)
        wait_until(lambda: any(int(m[5]) == state["minor"] + 2 for m in program.beacons()), 60,
                   "the frame changed after relinkd's restart")
        assert {m[2] for m in program.beacons()} == {bench.address("beacon")}, program.dump()
        assert program.proc.poll() is None, program.dump()
    finally:
        program.kill9()
