"""Relaunch through a real systemd manager (docs/relaunch.md#systemd): a
launch spec naming a unit (`systemd_unit`) is started with
org.freedesktop.systemd1.Manager.StartUnit. This machine has no systemd as
PID 1, so a real `systemd --user` manager of root, run in its own mount
namespace by bench/systemd/user-manager.sh, stands in for the system
manager (relinkd --systemd-manager-address names its bus). The example lock
client and relinkd SIGKILLed, a lock value pushed: relinkd has the manager
start the unit, whose process (it has systemd's INVOCATION_ID) gets the
restored state with the launch reason, then the value, once. A unit the
manager does not know is NotActivatable."""

import os
import shutil
import subprocess
from typing import Optional

import pytest
from dbus_fast import Variant

from e2e_harness import MANAGER, ROOT, Caller, Relinkd, event_value, wait_until
from conftest import disconnect_all
from test_e2e_relaunch import LAUNCHER, LOCK_ADDRESS, first_run, kill_both_and_restart, lines, link_state, push, value_relaunched

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("systemd") or not shutil.which("unshare"),
                                reason="needs root, systemd and unshare (a user manager in its own mount namespace)")

IDENT = "relaunch-unit"
NAME = "org.relink.example.UnitLock"
UNIT = "relink-test-lock.service"


def user_manager(run: str, uid: int, log: str):
    """Runs a real `systemd --user` of `uid` with runtime directory `run`
    (bench/systemd/user-manager.sh) until the generator is closed; yields
    once it is up. Skips the test where the machine cannot run one."""
    if subprocess.run(["unshare", "-m", "true"], stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("no mount namespace can be made here (unshare -m), so no systemd manager can run")
    with open(log, "wb") as f:
        proc = subprocess.Popen([os.path.join(ROOT, "bench", "systemd", "user-manager.sh"), run, str(uid)], stdout=f, stderr=f)
    try:
        wait_until(lambda: os.path.exists(os.path.join(run, "systemd", "private")) or proc.poll() is not None, 30,
                   f"uid {uid}'s user manager up, or exited")
        if proc.poll() is not None:
            # The machine cannot run a systemd manager (say, a read-only cgroup
            # file system, no cgroup to delegate): not relinkd's doing.
            pytest.skip(f"systemd --user cannot run as uid {uid} here (exit {proc.returncode}): {open(log).read()[-500:]}")
        yield
    finally:
        proc.terminate()
        proc.wait(30)


def pushed_until_delivered(bench, root: Caller, ident: str, out: str, before: int, prefix: str) -> str:
    """Pushes lock values, a new one each try, until one is stored or in the
    relaunched client's hands (`out` after its first `before` lines);
    returns that value. A push the restored link missed is tried again; a
    new value each time, since a value that was only slow to show (or was
    already delivered and acknowledged, so no longer among the stored
    events) must not be pushed twice: the test checks each arrives once."""
    tries = iter(range(1000))

    def seen() -> Optional[str]:
        got = [l["value"] for l in lines(out)[before:] if l["type"] == "event" and l["kind"] == "value-notified"
               and str(l.get("value", "")).startswith(prefix)]
        stored = [event_value(p) for _, k, p in root.events(ident) if k == "value-notified"]
        return next(iter(got + [v.decode() for v in stored if v and v.decode().startswith(prefix)]), None)
    wait_until(lambda: seen() or push(bench, f"{prefix}-{next(tries)}"), 60, "a value stored or delivered", 0.5)
    value = seen()
    assert value
    return value


@pytest.fixture
def manager(workdir):
    """A real systemd user manager of root; yields its runtime directory."""
    run = os.path.join(workdir, "systemd")
    os.makedirs(os.path.join(run, "config", "systemd", "user"))
    for _ in user_manager(run, 0, os.path.join(workdir, "user-manager.log")):
        yield run


def test_a_unit_spec_is_started_by_the_systemd_manager_after_client_and_relinkd_were_killed(bench, workdir, root, manager):
    out = os.path.join(workdir, "client.jsonl")
    invocation = os.path.join(workdir, "invocation")
    argv = [LAUNCHER, "--bus", bench.bus, "--identifier", IDENT, "--address", LOCK_ADDRESS, "--json", "--output", out]
    with open(os.path.join(manager, "config", "systemd", "user", UNIT), "w") as f:
        f.write("[Service]\nType=exec\n"
                f"ExecStart=/bin/sh -c 'echo $INVOCATION_ID > {invocation}; exec {' '.join(argv)}'\n")
    d = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log"),
                extra=["--systemd-manager-address", f"unix:path={manager}/bus"]).start()
    try:
        first = first_run(argv, out)
        # A unit the manager does not know: NotActivatable, from the manager's LoadState.
        err = root.error_of("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [IDENT, {
            "bus_name": Variant("s", NAME), "systemd_unit": Variant("s", "relink-nope.service")}])
        assert err == "org.relink.Error.NotActivatable", err
        root.call("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [IDENT, {
            "bus_name": Variant("s", NAME), "wake_on": Variant("as", ["value-notified"]), "systemd_unit": Variant("s", UNIT)}])
        before = kill_both_and_restart(d, first, root, NAME, out)
        wait_until(lambda: link_state(root, IDENT) == "connected", 30, "the link restored")
        value = pushed_until_delivered(bench, root, IDENT, out, before, "unit-open")
        value_relaunched(out, before, value, {"bus_name": NAME, "identifiers": [IDENT], "events": ["value-notified"]})
        with open(invocation) as f:
            assert len(f.read().strip()) == 32, "started by systemd (its INVOCATION_ID)"
    finally:
        subprocess.run(["busctl", f"--address=unix:path={manager}/bus", "call", "org.freedesktop.systemd1",
                        "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StopUnit", "ss", UNIT, "replace"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        d.kill9()
        disconnect_all(bench)
