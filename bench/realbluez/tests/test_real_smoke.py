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
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RUN_VM = os.path.join(REPO, "bench", "realbluez", "run-vm")
SETUP = os.path.join(REPO, "scripts", "setup-realbluez.sh")
LOGS = os.path.join(REPO, ".cache", "realbluez", "logs")
GUEST_TESTS = os.path.join(REPO, "bench", "realbluez", "guest_tests")
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


def run_in_vm(name: str, *tests: str) -> tuple[str, str]:
    """Boot the VM and run guest tests in it; (combined output, log directory)."""
    logdir = os.path.join(LOGS, name)
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    guest = [os.path.join(REPO, ".venv", "bin", "python"), "-m", "pytest", "-p", "no:cacheprovider",
             "-q", "-s", "-rs", *(os.path.join(GUEST_TESTS, t) for t in tests)]
    out = subprocess.run([RUN_VM, "--no-bluetoothd", "--controllers", "2", "--logdir", logdir,
                          "--timeout", "900", "--", *guest],
                         capture_output=True, text=True, cwd=REPO)
    text = out.stdout + out.stderr
    with open(os.path.join(logdir, "guest-output.txt"), "w") as f:
        f.write(text)
    if out.returncode == 90 and "set-up failed" in text:
        pytest.fail(f"the guest's set-up failed (logs in {logdir}):\n{text[-3000:]}")
    return text, logdir


def summary(text: str) -> str:
    """The guest pytest's last summary line ("2 passed in 90.1s", "1 failed, 1 passed in ...")."""
    lines = [l.strip() for l in text.splitlines()
             if re.fullmatch(r"=*\s*(\d+ \w+(, )?)+ in [\d.]+s( \([\d:]+\))?\s*=*", l.strip())]
    return lines[-1] if lines else ""


def test_real_bluetoothd_smoke(vm_ready):
    text, logdir = run_in_vm("smoke", "test_bench_guest.py", "test_smoke_guest.py")
    result = summary(text)
    assert re.match(r"=*\s*2 passed in", result), (
        f"real-BlueZ smoke tests: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")


@pytest.mark.xfail(reason="session 9's final code: passed in 2 of 3 runs; in the third relinkd had values back after "
                   "every fault played, but the bench could not play the bluetoothd SIGTERM restart; kept "
                   "non-strict until that is fixed and more CI runs have passed", strict=False)
def test_relinkd_faults_on_real_bluetoothd(vm_ready):
    text, logdir = run_in_vm("faults", "test_relinkd_faults_guest.py")
    result = summary(text)
    assert re.match(r"=*\s*1 passed in", result), (
        f"relinkd faults on real bluetoothd: {result or 'no result'} (logs in {logdir}):\n{text[-6000:]}")
