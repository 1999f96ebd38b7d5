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
restart-survival.json (docs/real-bluez.md quotes them)."""

import json
import os
import re
import shlex
import sys

import pytest

from gatewayenv import REPO, RELEASES, WANTED, booted, newest_deb, skip_reason

sys.path.insert(0, os.path.join(REPO, "bench", "realbluez", "tests"))
from realvm import summary  # noqa: E402  (the guest pytest's summary line, as the VM's suites read it)

GUEST_LOGS = "/var/tmp/relink-survival"
GUEST_ENV = {
    "RELINK_REALBLUEZ_GUEST": "1",
    "RELINK_REALBLUEZ_BACKEND": "gateway",
    "RELINK_GATEWAY_GUEST": "1",
    "RELINK_BENCH_PYTHON": "/usr/bin/python3",
    "RELINK_RELINKD": "/usr/sbin/relinkd",
    "RELINK_RELINKCTL": "/usr/bin/relinkctl",
    "RELINK_REALBLUEZ_LOGDIR": GUEST_LOGS,
    "PYTHONDONTWRITEBYTECODE": "1",
}
# RELINK_GATEWAY_SURVIVAL_K: a pytest -k expression picking cases (the
# assertion then wants every picked case passed), e.g. "subscribed and power".
SELECT = os.environ.get("RELINK_GATEWAY_SURVIVAL_K", "")
CASES = 48


@pytest.fixture(scope="module", params=[r for r in RELEASES if r in WANTED])
def gw(request):
    release = request.param
    reason = skip_reason(release, full_only="about 15 minutes per release")
    if reason:
        pytest.skip(reason)
    yield from booted(release, newest_deb(), name="survival")


def test_restart_survival_on_the_gateway(gw):
    out = gw.apt_install()
    assert out.rc == 0, out.out[-2000:]
    # The suite's relinkd owns org.relink; the packaged one must neither run
    # nor be started by the bus's activation while the suite's is restarting.
    gw.sh("systemctl mask --now relinkd.service")
    env = " ".join(f"{k}={v}" for k, v in GUEST_ENV.items())
    run = gw.sh(f"rm -rf {GUEST_LOGS} && mkdir -p {GUEST_LOGS} && cd {GUEST_LOGS} && "
                f"env {env} timeout 4200 python3 -m pytest -p no:cacheprovider -q -s -rs "
                "/srv/relink/bench/realbluez/guest_tests/test_restart_survival_guest.py "
                + (f"-k {shlex.quote(SELECT)} " if SELECT else "") +
                f"> {GUEST_LOGS}/output.txt 2>&1; echo rc=$?", timeout=4500, check=False)
    text = gw.sh(f"cat {GUEST_LOGS}/output.txt", check=False).out
    gw.save("guest-output.txt", text)
    results = gw.sh(f"cat {GUEST_LOGS}/restart-survival.json", check=False).out
    gw.save("restart-survival.json", results)
    gw.save("relinkd-tail.log", gw.sh(f"tail -n 20000 {GUEST_LOGS}/relinkd.log", check=False, timeout=300).out)
    try:
        cases = json.loads(results).get("cases", [])
    except ValueError:
        cases = []
    failed = [c["case"] for c in cases if c.get("result") != "pass"]
    result = summary(text)
    gw.results.add({"scenario": "restart-survival", "summary": result or run.out.strip(),
                    "cases": len(cases), "failed": failed})
    wanted = rf"\b{CASES} passed\b" if not SELECT else r"^\d+ passed, \d+ deselected"
    assert re.search(wanted, result) and not failed, (
        f"restart survival on {gw.release}: {result or run.out}; failed cases: {failed} "
        f"(logs in {gw.logdir}):\n{text[-6000:]}")
