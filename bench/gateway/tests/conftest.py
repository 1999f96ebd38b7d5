import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed scenario's report carries the guest's last journal lines
    (relinkd, bluetoothd, the bench), so a CI log alone says what the
    gateway saw; the whole journal is in LOGS/<release>/journal.txt."""
    outcome = yield
    report = outcome.get_result()
    gw = getattr(item, "funcargs", {}).get("gw")
    if report.when != "call" or not report.failed or gw is None:
        return
    try:
        tail = gw.sh("journalctl -b --no-pager -o short-monotonic -n 120 "
                     "-u relinkd -u bluetooth -u relink-bench", check=False, timeout=60).out
    except Exception as e:  # the guest may be the thing that failed
        tail = f"(no journal: {e})"
    report.sections.append(("the gateway's journal, last 120 lines", tail))
