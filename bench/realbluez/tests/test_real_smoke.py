"""The real-BlueZ smoke test, from the host: boots the VM (run-vm, ~30-40 s
under TCG) and runs bench/realbluez/guest_tests in it with real bluetoothd.

Runs only on request, as it boots a VM:
    RELINK_REALBLUEZ=1 .venv/bin/python -m pytest -q bench/realbluez/tests
Skipped, with the reason, when the VM cannot be set up here. Logs of the
last run: .cache/realbluez/logs/smoke/ (relinkd.log, bluetoothd.log,
findings.json, smoke-timings.json, run-vm.json)."""

import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RUN_VM = os.path.join(REPO, "bench", "realbluez", "run-vm")
SETUP = os.path.join(REPO, "scripts", "setup-realbluez.sh")
LOGDIR = os.path.join(REPO, ".cache", "realbluez", "logs", "smoke")
BUILD = os.environ.get("RELINK_BUILD_DIR", os.path.join(REPO, ".build", "debug"))

pytestmark = pytest.mark.skipif(
    os.environ.get("RELINK_REALBLUEZ") != "1",
    reason="boots a VM: run on request with RELINK_REALBLUEZ=1 (bench/realbluez/README.md)")


@pytest.fixture(scope="module")
def vm_ready():
    for product in ("relinkd", "relinkctl"):
        if not os.access(os.path.join(BUILD, product), os.X_OK):
            pytest.skip(f"{BUILD}/{product} missing: swift build --product {product}")
    setup = subprocess.run([SETUP], capture_output=True, text=True)
    if setup.returncode != 0:
        pytest.skip(f"the real-BlueZ VM cannot be set up here: {setup.stderr.strip()[-500:]}")


def test_real_bluetoothd_smoke(vm_ready):
    shutil.rmtree(LOGDIR, ignore_errors=True)
    os.makedirs(LOGDIR)
    guest = [os.path.join(REPO, ".venv", "bin", "python"), "-m", "pytest", "-p", "no:cacheprovider",
             "-q", "-s", "-rs", os.path.join(REPO, "bench", "realbluez", "guest_tests")]
    out = subprocess.run([RUN_VM, "--no-bluetoothd", "--controllers", "2", "--logdir", LOGDIR,
                          "--timeout", "600", "--", *guest],
                         capture_output=True, text=True, cwd=REPO)
    text = out.stdout + out.stderr
    if out.returncode == 90 and "set-up failed" in text:
        pytest.fail(f"the guest's set-up failed (logs in {LOGDIR}):\n{text[-3000:]}")
    assert out.returncode == 0, f"real-BlueZ smoke test failed (logs in {LOGDIR}):\n{text[-6000:]}"
    assert "1 passed" in text, f"the guest test did not run (logs in {LOGDIR}):\n{text[-3000:]}"
