"""What the campaigns share: the bench's modules on the import path (importing
this module puts them there), the commit they ran on, a read of relinkd's
store on a copy (never the file relinkd owns), and the summary's ending."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Iterator, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
# The bench's modules: benchproc (bench/tests), e2e_harness and the fuzz
# generator (bench/e2e/tests), relinkbench (bench).
for _path in (os.path.join(BENCH, "tests"), os.path.join(BENCH, "e2e", "tests"), BENCH):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def commit() -> str:
    """The checkout's short commit, "?" when git cannot say."""
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


@contextlib.contextmanager
def store_copy(state_dir: str) -> Iterator[sqlite3.Connection]:
    """The store of `state_dir` (`relink.sqlite` and its WAL) copied aside
    and opened: reading it cannot change relinkd's files (opening a WAL
    database may checkpoint it)."""
    with tempfile.TemporaryDirectory(prefix="relink-campaign-store-") as d:
        for suffix in ("", "-wal"):
            source = os.path.join(state_dir, "relink.sqlite" + suffix)
            if os.path.exists(source):
                shutil.copy(source, os.path.join(d, "relink.sqlite" + suffix))
        db = sqlite3.connect(os.path.join(d, "relink.sqlite"))
        try:
            yield db
        finally:
            db.close()


def integrity(db: sqlite3.Connection) -> list[str]:
    """`PRAGMA integrity_check`'s lines: ["ok"] for a sound database."""
    return [row[0] for row in db.execute("PRAGMA integrity_check")]


def process_figures(pid: int) -> dict[str, int]:
    """A process's resident memory (KiB), open descriptors and threads now."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return {"rss_kib": int(fields["VmRSS"].split()[0]), "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": int(fields["Threads"])}


def slope(xs: list[float], ys: list[float]) -> Optional[float]:
    """The least-squares slope of ys over xs; None for fewer than two
    points or a single x."""
    if len(set(xs)) < 2:
        return None
    return statistics.linear_regression(xs, ys).slope


def finish(summary: dict[str, Any], json_path: Optional[str]) -> int:
    """Prints the summary (and writes it to `json_path`); the exit status: 1 on any violation."""
    print(json.dumps(summary, indent=1))
    if json_path:
        with open(json_path, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if summary["violations"] else 0
