"""Issue 22's central role on real bluetoothd, from the host: one VM boot
running guest_tests/test_central_guest.py (the GATT database against what
the lock published, a descriptor read, write sizes from the negotiated MTU,
a long write, and the write stream on bluetoothd's AcquireWrite socket beside
a program writing into that socket itself). In the CI subset.

    RELINK_REALBLUEZ=1 .venv/bin/python -m pytest -q -rsx bench/realbluez/tests/test_real_central.py

Figures of the last run: .cache/realbluez/logs/central/central.json."""

import os
import re

import pytest

from realvm import run_in_vm, summary, vm_ready  # noqa: F401 (vm_ready: a fixture)

pytestmark = pytest.mark.skipif(
    os.environ.get("RELINK_REALBLUEZ") not in ("1", "full"),
    reason="boots a VM: run on request with RELINK_REALBLUEZ=1 (bench/realbluez/README.md)")


def test_the_central_role_on_real_bluetoothd(vm_ready):
    text, logdir = run_in_vm("central", "test_central_guest.py")
    result = summary(text)
    assert re.match(r"=*\s*1 passed in", result), (
        f"the central role on real bluetoothd: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")
