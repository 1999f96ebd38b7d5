"""docs/getting-started.md, followed: its shell blocks marked
`<!-- first-hour: bench -->` are run in order, as one bash script from the
checkout (with `set -euo pipefail`), so the page cannot drift from what
relink does. The script starts its own bench and relinkd and stops them;
the checks here are on what it printed, the outputs the page shows."""

import os
import re
import signal
import subprocess
import threading

from e2e_harness import ROOT

PAGE = os.path.join(ROOT, "docs", "getting-started.md")
MARK = "<!-- first-hour: bench -->"


SECOND = "<!-- first-hour: second-terminal -->"


def marked_blocks(text: str, mark: str = MARK) -> list[str]:
    blocks = []
    for part in text.split(mark)[1:]:
        body = part.lstrip("\n")
        assert body.startswith("```sh\n"), f"a {mark} line must stand right before a ```sh block: {body[:80]!r}"
        blocks.append(body[len("```sh\n"):].split("\n```", 1)[0])
    return blocks


def second_terminal(page: str, work: str, env: dict) -> subprocess.CompletedProcess:
    """The page's second-terminal block, with the `work` directory the first
    terminal printed, run in a shell of its own (none of the first one's
    variables), then `relinkctl status` there."""
    [block] = marked_blocks(page, SECOND)
    lines = block.split("\n")
    assert lines[0].startswith("work="), lines[0]
    script = "set -euo pipefail\n" + "\n".join([f"work={work}"] + lines[1:]) + "\ncommand -v relinkctl\nrelinkctl status\n"
    return subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_marked_blocks_are_found():
    with open(PAGE) as f:
        blocks = marked_blocks(f.read())
    assert len(blocks) >= 6
    assert blocks[0].startswith("swift build\n")


def test_getting_started_bench_part_runs_as_written():
    with open(PAGE) as f:
        page = f.read()
    blocks = marked_blocks(page)
    # Once relinkd runs, the first terminal says where its work directory is
    # and waits (bounded) while a second terminal, set up as the page says,
    # reaches relinkd: the walkthrough followed from two terminals.
    started = next(i for i, b in enumerate(blocks) if "relinkd --state-directory" in b)
    hook = ('echo "FIRST-HOUR-WORK=$work"\n'
            'for _ in $(seq 600); do [ -e "$work/second-terminal-done" ] && break; sleep 0.1; done\n')
    script = "set -euo pipefail\n" + "\n".join(blocks[:started + 1]) + "\n" + hook + "\n".join(blocks[started + 1:]) + "\n"
    env = {k: v for k, v in os.environ.items()
           if k not in ("DBUS_SYSTEM_BUS_ADDRESS", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                        "STATE_DIRECTORY", "JOURNAL_STREAM")}
    proc = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    seen_work = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("FIRST-HOUR-WORK="):
                seen_work.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    second = None
    try:
        if seen_work.wait(timeout=300):
            work = next(l for l in lines if l.startswith("FIRST-HOUR-WORK=")).split("=", 1)[1].strip()
            try:
                second = second_terminal(page, work, env)
            finally:
                open(os.path.join(work, "second-terminal-done"), "w").close()
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join(timeout=10)
    out = "".join(lines)
    assert proc.returncode == 0, out[-6000:]
    assert second is not None, "the first terminal never printed its work directory: " + out[-3000:]
    assert second.returncode == 0, second.stdout + second.stderr
    assert os.path.realpath(second.stdout.splitlines()[0]) == os.path.realpath(os.path.join(ROOT, ".build", "debug", "relinkctl")), second.stdout
    assert "Ready: true" in second.stdout, second.stdout

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
