"""Host-side helpers of the real-BlueZ tests: the set-up check (fixture
`vm_ready`), one VM boot running guest tests, and the guest pytest's summary."""

import json
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


@pytest.fixture(scope="module")
def vm_ready():
    for product in ("relinkd", "relinkctl"):
        if not os.access(os.path.join(BUILD, product), os.X_OK):
            pytest.skip(f"{BUILD}/{product} missing: swift build --product {product}")
    setup = subprocess.run([SETUP], capture_output=True, text=True)
    if setup.returncode != 0:
        pytest.skip(f"the real-BlueZ VM cannot be set up here: {setup.stderr.strip()[-500:]}")


def run_in_vm(name: str, *tests: str, controllers: int = 2, timeout: int = 900,
              pytest_args: tuple[str, ...] = (), env: tuple[str, ...] = ()) -> tuple[str, str]:
    """Boot the VM and run guest tests in it (`env`: NAME=VALUE settings for
    the guest pytest); (combined output, log directory)."""
    logdir = os.path.join(LOGS, name)
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    guest = [*(("env", *env) if env else ()), os.path.join(REPO, ".venv", "bin", "python"), "-m", "pytest", "-p", "no:cacheprovider",
             "-q", "-s", "-rs", *pytest_args, *(os.path.join(GUEST_TESTS, t) for t in tests)]
    out = subprocess.run([RUN_VM, "--no-bluetoothd", "--controllers", str(controllers), "--logdir", logdir,
                          "--timeout", str(timeout), "--", *guest],
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


def failed_cases(logdir: str, results: str) -> list[str]:
    """The cases a guest suite recorded as not passed in LOGDIR/`results`
    ({"cases": [{"case", "result", ...}]}); empty when there is no record."""
    try:
        with open(os.path.join(logdir, results)) as f:
            return [c["case"] for c in json.load(f)["cases"] if c["result"] != "pass"]
    except (OSError, ValueError, KeyError):
        return []
