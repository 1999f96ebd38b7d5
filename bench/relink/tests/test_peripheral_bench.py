"""The peripheral role's figures script (bench/relink/peripheral_bench.py)
runs end to end on the debug relinkd with small counts: every row is
printed, nothing is lost or reordered on either side, and 1, 4 and 16
identifiers are registered again after each restart. No time is asserted.

  .venv/bin/python -m pytest bench/relink/tests/test_peripheral_bench.py
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RELINKD = os.environ.get("RELINKD", os.path.join(ROOT, ".build", "debug", "relinkd"))


def test_the_peripheral_figures_run_and_lose_nothing():
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "peripheral_bench.py"),
                          "--relinkd", RELINKD, "--count", "100", "--rounds", "3", "--latency", "5", "--reps", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert re.search(r"^\| relinkd, `UpdateValue` then bluetoothd \| \d+ \(\d+-\d+\) \| 0 of 300 \|$", out.stdout, re.M), out.stdout
    assert re.search(r"^\| relinkd, \d+ `UpdateValue` calls on their way at once \(order not kept\) \| \d+ \(\d+-\d+\) \| 0 of 300 \(lost or doubled\) \|$", out.stdout, re.M), out.stdout
    assert re.search(r"^\| floor, `PropertiesChanged` straight to bluetoothd \(\d+ on their way at most\) \| \d+ \(\d+-\d+\) \| 0 of 300 \|$", out.stdout, re.M), out.stdout
    assert re.search(r"^added by relinkd \(median\): -?\d+\.\d+ ms$", out.stdout, re.M), out.stdout
    for n, advertising in ((1, 1), (4, 4), (16, 15)):
        assert re.search(rf"^\| {n} \| {advertising} \| \d+ \(\d+-\d+\) \| \d+ \(\d+-\d+\) \|$", out.stdout, re.M), out.stdout
