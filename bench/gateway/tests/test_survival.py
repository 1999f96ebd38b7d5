"""The restart-survival suite (bench/realbluez/guest_tests/
test_restart_survival_guest.py: every restart kind x scanning / pending /
connecting / subscribed x the bench's lock and band, 48 cases) inside a
booted gateway, on the release's own bluetoothd as Debian's
bluetooth.service runs it: bluez 5.82 on Debian 13's kernel 6.12 (issue 32,
item 4), and 5.66 on Debian 12 beside the virtme VM's run.

relink is installed by apt as in test_gateway.py; then relinkd.service is
masked and stopped, and the guest suite runs relinkd itself (the installed
/usr/sbin/relinkd, as the user relink, with a state directory of its own and
debug logs), as it does in the virtme VM: its restart kinds are relinkd's
own SIGKILL and SIGTERM, bluetooth.service killed or stopped and started
(the bench's gateway backend), hci0 powered off for 1 s, and "reboot"
(relinkd and bluetoothd stopped, started again). A true reboot and the
package's unit are test_gateway.py's. About 15 minutes per release under
TCG here; RELINK_GATEWAY=full only, one boot per release:

    RELINK_GATEWAY=full RELINK_GATEWAY_RELEASES=trixie .venv/bin/python -m pytest -q -rsx bench/gateway/tests/test_survival.py

Per-case results and timings: .cache/gateway/logs/<release>-survival/
survival-restart-survival.json (docs/real-bluez.md quotes them)."""

import json
import os
import re
import sys

import pytest

from gatewayenv import (REPO, install_for_guest_suites, newest_deb, run_guest_suite, BOOTED_RELEASES,
                        boot_or_skip)

sys.path.insert(0, os.path.join(REPO, "bench", "realbluez", "tests"))
from realvm import summary  # noqa: E402  (the guest pytest's summary line, as the VM's suites read it)

# RELINK_GATEWAY_SURVIVAL_K: a pytest -k expression picking cases (the
# assertion then wants every picked case passed), e.g. "subscribed and power".
SELECT = os.environ.get("RELINK_GATEWAY_SURVIVAL_K", "")
CASES = 48


@pytest.fixture(scope="module", params=BOOTED_RELEASES)
def gw(request):
    yield from boot_or_skip(request.param, newest_deb(), name="survival", full_only="about 15 minutes per release")


def test_restart_survival_on_the_gateway(gw):
    install_for_guest_suites(gw)
    text, docs = run_guest_suite(gw, "survival", ("test_restart_survival_guest.py",),
                                 pytest_args=("-k", SELECT) if SELECT else ())
    try:
        cases = json.loads(docs.get("restart-survival.json", "")).get("cases", [])
    except ValueError:
        cases = []
    failed = [c["case"] for c in cases if c.get("result") != "pass"]
    result = summary(text)
    gw.results.add({"scenario": "restart-survival", "summary": result or text[-300:].strip(),
                    "cases": len(cases), "failed": failed})
    wanted = rf"\b{CASES} passed\b" if not SELECT else r"^\d+ passed, \d+ deselected"
    assert re.search(wanted, result) and not failed, (
        f"restart survival on {gw.release}: {result or 'no result'}; failed cases: {failed} "
        f"(logs in {gw.logdir}):\n{text[-6000:]}")
