"""The Swift band example (examples/swift-band), a package of its own that
depends on relink the way a user's package does: it builds, and on the
bench with the real relinkd it registers, connects the band, subscribes to
its heart rate, prints values and acknowledges them; SIGKILLed and started
again it gets its restored state and the values it missed; when relinkd is
SIGKILLed and restarted it registers again by itself and prints the
`restored` event, then values. The Swift snippet of docs/relinkctl.md
("The Swift client library") is the example's code, word for word."""

import os
import re
import shutil
import subprocess
import textwrap
import threading
import time

import pytest

from e2e_harness import ROOT, die_with_parent, wait_until

PACKAGE = os.path.join(ROOT, "examples", "swift-band")
MAIN = os.path.join(PACKAGE, "Sources", "relink-band", "main.swift")
DOC = os.path.join(ROOT, "docs", "relinkctl.md")
BAND = "00:00:00:00:00:03"
IDENT = "swift-band"
VALUE = re.compile(r"^#(\d+) heart rate (\d+) bpm$")


def snippet_of_example() -> str:
    """The lines between `// readme:begin` and `// readme:end`, dedented."""
    with open(MAIN) as f:
        text = f.read()
    body = text.split("// readme:begin\n", 1)[1].split("// readme:end", 1)[0]
    return textwrap.dedent(body).strip()


def snippet_in_doc() -> str:
    """The ```swift block after docs/relinkctl.md's line naming the example's main.swift, dedented."""
    with open(DOC) as f:
        text = f.read()
    after = text.split("examples/swift-band/Sources/relink-band/main.swift", 1)[1]
    return textwrap.dedent(after.split("```swift\n", 1)[1].split("```", 1)[0]).strip()


def test_doc_swift_snippet_is_the_example_code():
    assert snippet_in_doc() == snippet_of_example()


class SwiftBand:
    """The example's binary, its stdout lines collected as they come."""

    def __init__(self, binary: str, bus: str):
        # As a user runs it, its output into a pipe: no stdbuf (it flushes each line itself).
        self.proc = subprocess.Popen([binary, "--bus-address", bus, "--identifier", IDENT, BAND],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=die_with_parent)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def values(self) -> list[tuple[int, int]]:
        return [(int(m[1]), int(m[2])) for m in map(VALUE.match, list(self.lines)) if m]

    def has(self, pattern: str) -> bool:
        return any(re.search(pattern, l) for l in list(self.lines))

    def dump(self) -> str:
        return "\n".join(self.lines[-30:])

    def kill9(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.reader.join(5)


@pytest.fixture(scope="module")
def binary():
    if not shutil.which("swift"):
        pytest.fail("swift is not on PATH")
    started = time.monotonic()
    build = subprocess.run(["swift", "build", "--package-path", PACKAGE], capture_output=True, text=True, timeout=1500)
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    print(f"examples/swift-band built in {time.monotonic() - started:.0f} s")
    path = subprocess.run(["swift", "build", "--package-path", PACKAGE, "--show-bin-path"], capture_output=True,
                          text=True, check=True).stdout.strip()
    return os.path.join(path, "relink-band")


def test_swift_band_example_help_and_usage_errors(binary):
    """`--help` prints the usage on stdout and exits 0; a bad command line
    prints what is wrong and the usage on stderr and exits 2."""
    help_ = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    assert help_.returncode == 0 and help_.stdout.startswith("usage: relink-band") and "--identifier" in help_.stdout, help_
    bad = subprocess.run([binary, "--frequency", "3"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "unknown option --frequency" in bad.stderr and "usage: relink-band" in bad.stderr, bad


def test_swift_band_example_streams_and_survives_its_kill_and_relinkd_restart(binary, bench, relinkd):
    band = SwiftBand(binary, bench.bus)
    try:
        wait_until(lambda: band.has(r"^restored: \[\], acknowledged #0$"), 20, "the restored state of a new identifier")
        wait_until(lambda: len(band.values()) >= 3, 30, "three heart-rate values")
        assert band.lines[0].startswith("restored:"), band.dump()
        seen = band.values()
        band.kill9()

        band = SwiftBand(binary, bench.bus)
        wait_until(lambda: band.has(rf"^restored: \[\"{BAND} [a-z-]+\"\], acknowledged #\d+$"), 20,
                   "the restored state with the band")
        acked = int(re.search(r"#(\d+)$", band.lines[0])[1])
        assert acked >= seen[0][0], band.dump()
        wait_until(lambda: len(band.values()) >= 3, 30, "values after the restart")
        seqs = [s for s, _ in band.values()]
        assert seqs == sorted(set(seqs)) and seqs[0] > acked, band.dump()

        relinkd.kill9()
        relinkd.start()
        wait_until(lambda: band.has(r"^#\d+ restored$"), 30, "the restored event after relinkd's restart")
        back = int(next(re.match(r"^#(\d+) restored$", l)[1] for l in list(band.lines) if re.match(r"^#\d+ restored$", l)))
        wait_until(lambda: any(s > back for s, _ in band.values()), 20, "values after the restored link")
        assert band.proc.poll() is None, band.dump()
    finally:
        band.kill9()
