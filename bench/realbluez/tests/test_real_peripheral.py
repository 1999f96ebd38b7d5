"""Issue 23's peripheral role on real bluetoothd, from the host: one VM boot
running guest_tests/test_peripheral_guest.py (relinkd on hci0 hosts a
program's service and advertisement; a remote central on hci2 finds, reads,
writes, subscribes, gets values; again after a relinkd SIGKILL with no
program attached). In the CI subset.

    RELINK_REALBLUEZ=1 .venv/bin/python -m pytest -q -rsx bench/realbluez/tests/test_real_peripheral.py

Figures of the last run: .cache/realbluez/logs/peripheral/peripheral.json."""

import os
import re

import pytest

from realvm import run_in_vm, summary, vm_ready  # noqa: F401 (vm_ready: a fixture)

pytestmark = pytest.mark.skipif(
    os.environ.get("RELINK_REALBLUEZ") not in ("1", "full"),
    reason="boots a VM: run on request with RELINK_REALBLUEZ=1 (bench/realbluez/README.md)")


def test_the_peripheral_role_on_real_bluetoothd(vm_ready):
    text, logdir = run_in_vm("peripheral", "test_peripheral_guest.py", controllers=3)
    result = summary(text)
    assert re.match(r"=*\s*1 passed in", result), (
        f"the peripheral role on real bluetoothd: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")
