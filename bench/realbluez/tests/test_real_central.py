"""Issue 22's central role on real bluetoothd, from the host: one VM boot
running guest_tests/test_central_guest.py (the GATT database against what
the lock published, a descriptor read, write sizes from the negotiated MTU,
a long write, and the write stream on bluetoothd's AcquireWrite socket beside
a program writing into that socket itself; a 64 KiB transfer with and
without response, relinkd SIGKILLed a quarter of the way, resumed and
checked byte for byte at the lock). In the CI subset.

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
    # The transfers (a relinkd SIGKILL each, about two more minutes) run in
    # the full suite only; they passed there in session 12 once their chunks
    # fit what the lock's bluetoothd takes (docs/real-bluez.md, 23 and 26).
    full = os.environ.get("RELINK_REALBLUEZ") == "full"
    text, logdir = run_in_vm("central", "test_central_guest.py", pytest_args=() if full else ("-k", "not transfer"))
    result = summary(text)
    assert re.match(r"=*\s*3 passed in" if full else r"=*\s*1 passed, 2 deselected in", result), (
        f"the central role on real bluetoothd: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")
