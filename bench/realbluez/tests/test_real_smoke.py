"""The real-BlueZ tests, from the host: each boots the VM (run-vm, 25-40 s to
a ready guest under TCG) and runs guest tests in it with real bluetoothd:
  * test_real_bluetoothd_smoke: the bench's fault controls on real
    bluetoothd (test_bench_guest.py) and relinkd's smoke test: connect,
    subscribe, values; relinkd SIGKILL; bluetoothd SIGKILL restart
    (test_smoke_guest.py). Expected to pass.
  * test_relinkd_faults_on_real_bluetoothd: relinkd through a GATT
    application restart, out of range, a power-off while advertising, a
    central power cycle and a bluetoothd SIGTERM restart
    (test_relinkd_faults_guest.py). Known to fail until
    issue #20's findings are fixed in relinkd: a non-strict xfail.

Runs only on request, as it boots a VM:
    RELINK_REALBLUEZ=1 .venv/bin/python -m pytest -q bench/realbluez/tests
Skipped, with the reason, when the VM cannot be set up here. Logs of the
last run: .cache/realbluez/logs/<test>/ (relinkd.log, bluetoothd.log,
findings.json, differences.json, smoke-timings.json, dmesg.log, run-vm.json)."""

import os
import re

import pytest

from realvm import run_in_vm, summary, vm_ready  # noqa: F401 (vm_ready: a fixture)

pytestmark = pytest.mark.skipif(
    os.environ.get("RELINK_REALBLUEZ") not in ("1", "full"),
    reason="boots a VM: run on request with RELINK_REALBLUEZ=1 (bench/realbluez/README.md)")

# In CI the booted gateways (bench/gateway, Debian 12's bluetoothd 5.66 and
# Debian 13's 5.82) play what these two boots check: connect, subscribe,
# values, relinkd SIGKILL, out of range, a bluetoothd restart; they stay in
# the full suite. CI's time goes to the gateways instead (issue 32).
full_only = pytest.mark.skipif(os.environ.get("RELINK_REALBLUEZ") != "full",
                               reason="RELINK_REALBLUEZ=full only: in CI bench/gateway covers it")


@full_only
def test_real_bluetoothd_smoke(vm_ready):
    text, logdir = run_in_vm("smoke", "test_bench_guest.py", "test_smoke_guest.py")
    result = summary(text)
    assert re.match(r"=*\s*2 passed in", result), (
        f"real-BlueZ smoke tests: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")


@pytest.mark.xfail(reason="session 11's CI runs: values back after every fault each time, but the names check failed "
                   "in 2 of 3 (a reconnection's Connected=true not signalled relabelled both names; fixed in "
                   "session 12, NameTrackerTests.aNameKeepsItsSourceWhenConnectedIsNotSignalled); kept "
                   "non-strict until more CI runs have passed", strict=False)
@full_only
def test_relinkd_faults_on_real_bluetoothd(vm_ready):
    text, logdir = run_in_vm("faults", "test_relinkd_faults_guest.py")
    result = summary(text)
    assert re.match(r"=*\s*1 passed in", result), (
        f"relinkd faults on real bluetoothd: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")
