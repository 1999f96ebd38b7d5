"""The full real-BlueZ suite's own part, from the host, in one VM boot
(three controllers; about 30 minutes under TCG on 2 cores):
  * guest_tests/test_restart_survival_guest.py: every restart kind (relinkd
    SIGKILL / SIGTERM, bluetoothd SIGKILL / SIGTERM restart, central power
    cycle, "reboot") x scanning / pending / connecting / subscribed x the
    bench's lock and band: 48 cases;
  * guest_tests/test_third_party_guest.py: BlueZ's own example-gatt-server
    and example-advertisement as the peripheral: found by a scan for
    0x180D, subscribed to 0x2A37, values after a relinkd SIGKILL and
    bluetoothd SIGKILL and SIGTERM restarts.

Not in CI: only with the full command, which runs the CI subset too:
    RELINK_REALBLUEZ=full .venv/bin/python -m pytest -q -rsx bench/realbluez/tests
Per-case results and timings: .cache/realbluez/logs/survival/
restart-survival.json and third-party.json (docs/real-bluez.md quotes them)."""

import os
import re

import pytest

from realvm import failed_cases, run_in_vm, summary, vm_ready  # noqa: F401 (vm_ready: a fixture)

pytestmark = pytest.mark.skipif(
    os.environ.get("RELINK_REALBLUEZ") != "full",
    reason="the full real-BlueZ suite: run on request with RELINK_REALBLUEZ=full (bench/realbluez/README.md)")


def test_restart_survival_and_a_third_party_peripheral_on_real_bluetoothd(vm_ready):
    text, logdir = run_in_vm("survival", "test_restart_survival_guest.py", "test_third_party_guest.py",
                             controllers=3, timeout=3600)
    result = summary(text)
    failed = failed_cases(logdir, "restart-survival.json")
    assert re.match(r"=*\s*49 passed in", result), (
        f"restart survival on real bluetoothd: {result or 'no result'}; failed cases: {failed} "
        f"(logs in {logdir}):\n{text[-6000:]}")
