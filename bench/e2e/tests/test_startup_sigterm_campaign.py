"""The start-up SIGTERM campaign's short version (bench/campaigns/startup_sigterm.py,
issue 37): relinkd, starting on a store of 3,000 intents, is sent SIGTERM
at a random moment before READY, 20 times on the same store: each time it
exits cleanly within the bound and the store passes integrity_check and
holds every identifier, intent and subscription it held."""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "campaigns"))

import startup_sigterm  # noqa: E402
from e2e_harness import RELINKD  # noqa: E402


def test_twenty_sigterms_during_start_up_exit_cleanly_and_keep_the_store():
    lines: list[str] = []
    summary = startup_sigterm.run(20, 300, 10, int(time.time()), relinkd_path=RELINKD, log=lines.append)
    assert summary["violations"] == [], "\n".join(lines)
    assert summary["intents"] == 3000 and summary["exit_ms_max"] is not None, summary
    print(summary)
