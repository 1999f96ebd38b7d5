"""Issue 23's peripheral role on real bluetoothd, from the host: one VM boot
(three controllers) running
  * guest_tests/test_peripheral_guest.py: relinkd on hci0 hosts a program's
    service and advertisement; a remote central on hci2 finds, reads,
    writes, subscribes, gets values; again after a relinkd SIGKILL with no
    program attached;
  * guest_tests/test_peripheral_restarts_guest.py: the restart-survival
    matrix of the role (6 restart kinds x advertising / connected /
    subscribed): with RELINK_REALBLUEZ=1 (CI) only its two most telling
    cases, with RELINK_REALBLUEZ=full all 18.
With RELINK_REALBLUEZ=full, a second boot runs
  * guest_tests/test_peripheral_user_guest.py: the same role used by a
    program run as `nobody` under the shipped D-Bus policy (issue 39).

    RELINK_REALBLUEZ=1 .venv/bin/python -m pytest -q -rsx bench/realbluez/tests/test_real_peripheral.py

Figures of the last run: .cache/realbluez/logs/peripheral/peripheral.json
and peripheral-restarts.json (per case: result and timings)."""

import os
import re

import pytest

from realvm import failed_cases, run_in_vm, summary, vm_ready  # noqa: F401 (vm_ready: a fixture)

# The restart matrix's cases (ids STATE-KIND): 6 kinds x 3 states.
MATRIX = 18
# The CI subset: the two cases that tell most, where bluetoothd itself takes
# the link, the advertisement and the subscription away (about 2 minutes).
CI_SUBSET = ("subscribed-bluetoothd_term", "connected-power_cycle")

pytestmark = pytest.mark.skipif(
    os.environ.get("RELINK_REALBLUEZ") not in ("1", "full"),
    reason="boots a VM: run on request with RELINK_REALBLUEZ=1 (bench/realbluez/README.md)")


def test_the_peripheral_role_on_real_bluetoothd(vm_ready):
    full = os.environ.get("RELINK_REALBLUEZ") == "full"
    cases = MATRIX if full else len(CI_SUBSET)
    text, logdir = run_in_vm("peripheral", "test_peripheral_guest.py", "test_peripheral_restarts_guest.py",
                             controllers=3, timeout=3000 if full else 900,
                             pytest_args=() if full else ("-k", f"not restart_survival or {' or '.join(CI_SUBSET)}"))
    result = summary(text)
    failed = failed_cases(logdir, "peripheral-restarts.json")
    expected = rf"=*\s*{1 + cases} passed" + ("" if full else rf", {MATRIX - cases} deselected") + " in"
    assert re.match(expected, result), (
        f"the peripheral role on real bluetoothd: {result or 'no result'}; failed restart cases: {failed} "
        f"(logs in {logdir}):\n{text[-6000:]}")


@pytest.mark.skipif(os.environ.get("RELINK_REALBLUEZ") != "full", reason="the full real-BlueZ suite only (RELINK_REALBLUEZ=full)")
def test_the_peripheral_role_for_a_program_of_an_ordinary_user(vm_ready):
    """Issue 39: guest_tests/test_peripheral_user_guest.py, a program run as
    `nobody` publishes, advertises, is subscribed to by a remote central and
    gets its writes, through relinkd (as relink) under the shipped D-Bus
    policy. One boot of its own (three controllers), about 3 minutes."""
    text, logdir = run_in_vm("peripheral-user", "test_peripheral_user_guest.py", controllers=3, timeout=900)
    result = summary(text)
    assert re.match(r"=*\s*1 passed in", result), (
        f"the peripheral role for an ordinary user's program: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")
