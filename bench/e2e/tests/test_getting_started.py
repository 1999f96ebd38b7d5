"""docs/getting-started.md, followed: its shell blocks marked
`<!-- first-hour: bench -->` are run in order, as one bash script from the
checkout (with `set -euo pipefail`), so the page cannot drift from what
relink does. The script starts its own bench and relinkd and stops them;
the checks here are on what it printed, the outputs the page shows."""

import os
import re
import signal
import subprocess

from e2e_harness import ROOT

PAGE = os.path.join(ROOT, "docs", "getting-started.md")
MARK = "<!-- first-hour: bench -->"


def marked_blocks(text: str) -> list[str]:
    blocks = []
    for part in text.split(MARK)[1:]:
        body = part.lstrip("\n")
        assert body.startswith("```sh\n"), f"a {MARK} line must stand right before a ```sh block: {body[:80]!r}"
        blocks.append(body[len("```sh\n"):].split("\n```", 1)[0])
    return blocks


def test_marked_blocks_are_found():
    with open(PAGE) as f:
        blocks = marked_blocks(f.read())
    assert len(blocks) >= 6
    assert blocks[0].startswith("swift build\n")


def test_getting_started_bench_part_runs_as_written():
    with open(PAGE) as f:
        script = "set -euo pipefail\n" + "\n".join(marked_blocks(f.read())) + "\n"
    env = {k: v for k, v in os.environ.items()
           if k not in ("DBUS_SYSTEM_BUS_ADDRESS", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                        "STATE_DIRECTORY", "JOURNAL_STREAM")}
    proc = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, out[-6000:]

    assert "Ready: true" in out
    assert re.search(r"front-door: 1 connection\(s\), 1 subscription\(s\), scanning false\n"
                     r"\s+[0-9A-F-]{36} 00:00:00:00:00:02 connected attempt \d+", out), out
    # The value pushed while the lock was held: "unlocked", then acknowledged.
    assert re.search(r"^\d+ \S+ value-notified [0-9A-F-]{36} \S+ 756e6c6f636b6564  \"unlocked\"$", out, re.M), out
    last = re.search(r"^LastSequence: (\d+)$", out, re.M)
    acked = re.search(r"^Acknowledged: (\d+)$", out, re.M)
    assert last and acked and last[1] == acked[1], out
    # The band streams heart-rate values.
    assert len(re.findall(r"^\d+ \S+ value-notified .*00002a37-0000-1000-8000-00805f9b34fb", out, re.M)) == 3, out
    assert re.search(r"^[0-9A-F-]{36} 00:00:00:00:00:03 connected \"Wrist Band\"", out, re.M), out
    # relinkd SIGKILLed and restarted: the link comes back restored, numbered past the crash skip,
    # and the state pushed while it was down is read, not an event.
    restored = re.search(r"^(\d+) \S+ restored [0-9A-F-]{36} 00:00:00:00:00:02 via knownIdentifier", out, re.M)
    assert restored and int(restored[1]) >= int(last[1]) + 129, out
    assert re.search(r"^6c6f636b6564  \"locked\"$", out, re.M), out
    # The lock example restores the identifier the page set up.
    assert re.search(r"^restore: the lock is already known \(connected\); subscribed$", out, re.M), out
