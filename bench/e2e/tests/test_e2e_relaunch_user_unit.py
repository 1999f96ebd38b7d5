"""A user's launch spec naming a systemd unit is started on that user's own
manager (docs/relaunch.md#systemd): relinkd runs `systemctl --user start
UNIT` as the identifier's owner, with that user's runtime directory
(relinkd --user-runtime-directory). Alice (`nobody`) has a real `systemd
--user` manager, run for the test by bench/systemd/user-manager.sh in a
cgroup delegated to her and its own mount namespace, with the unit in her
manager's unit directory; her lock client registers, sets the spec, and is
SIGKILLed with relinkd; a lock value pushed: relinkd has her manager start
the unit, whose process (systemd's INVOCATION_ID, running as alice) gets
the restored state with the launch reason, then the value, once. A unit her
manager does not know is NotActivatable; bob (`relink-e2e`, no manager)
naming alice's unit gets NotReady: relinkd asks only bob's own manager.
Her manager stopped, the next start fails: NotReady naming her uid and the
unit, in Status's last_error and the journal's relaunch-failed line."""

import os
import shutil
import subprocess
import tempfile

import pytest

from e2e_harness import MANAGER, VENV_PY, Caller, Relinkd, die_with_parent, wait_until
from conftest import disconnect_all
from test_e2e_relaunch import LOCK_ADDRESS, kill_both_and_restart, lines, link_state, push, status_launch, value_relaunched
from test_e2e_relaunch_systemd import pushed_until_delivered, user_manager
# bench: the two-users bench, whose bus alice and bob reach; runtime: the clients where they can read them.
from test_e2e_two_users import ALICE, BOB, OtherUser, bench, runtime, setpriv, user_env  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("systemd") or not shutil.which("unshare")
                                or not shutil.which("setpriv"),
                                reason="needs root, systemd, unshare and setpriv (a user's manager in its own mount namespace)")

IDENT = "relaunch-user-unit"
BOB_IDENT = "relaunch-user-unit-bob"
NAME = "org.relink.example.UserUnitLock"
UNIT = "relink-test-user-lock.service"


def variant(signature: str, value) -> dict:
    return {"$v": [signature, value]}


@pytest.fixture
def shared():
    """A directory every user may write (the client's output, the unit's marks)."""
    d = tempfile.mkdtemp(prefix="relink-e2e-user-unit-")
    os.chmod(d, 0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def users(shared):
    """Users' runtime directories (relinkd's --user-runtime-directory is USERS/%U),
    alice's with her own systemd manager running; yields USERS and what
    stops her manager."""
    base = os.path.join(shared, "users")
    os.mkdir(base)
    os.chmod(base, 0o755)
    manager = user_manager(os.path.join(base, str(ALICE)), ALICE, os.path.join(shared, "user-manager.log"))
    next(manager)
    try:
        yield base, manager.close
    finally:
        manager.close()


def stop_unit(run: str) -> None:
    """Alice's manager stops her unit (nothing when it does not run)."""
    subprocess.run(setpriv(ALICE) + ["systemctl", "--user", "stop", UNIT], env={"XDG_RUNTIME_DIR": run, "PATH": "/usr/bin:/bin"},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)


def test_a_users_unit_is_started_on_their_own_manager_and_never_on_another_users(bench, shared, users, runtime):
    users, stop_manager = users
    run = os.path.join(users, str(ALICE))
    out = os.path.join(shared, "client.jsonl")
    invocation = os.path.join(shared, "invocation")
    python = os.path.realpath(VENV_PY)
    argv = [python, "-m", "relink_lock", "--bus", bench.bus, "--identifier", IDENT, "--address", LOCK_ADDRESS,
            "--json", "--output", out]
    unit = os.path.join(run, "config", "systemd", "user", UNIT)
    with open(unit, "w") as f:
        f.write("[Service]\nType=exec\n"
                f"Environment=PYTHONPATH={runtime} PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1\n"
                f"ExecStart=/bin/sh -c 'echo $INVOCATION_ID $(id -u) > {invocation}; exec {' '.join(argv)}'\n")
    os.chown(unit, ALICE, -1)
    d = Relinkd(bench.bus, os.path.join(shared, "state"), os.path.join(shared, "relinkd.log"),
                extra=["--user-runtime-directory", os.path.join(users, "%U")]).start()
    root = Caller(bench.bus)
    alice = bob = first = None
    try:
        first = subprocess.Popen(setpriv(ALICE) + argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=user_env(runtime), cwd="/", preexec_fn=die_with_parent)
        wait_until(lambda: any(l["type"] == "event" and l["kind"] == "connected" for l in lines(out)), 40,
                   "alice's first run's lock connected")
        alice = OtherUser(bench.bus, ALICE, runtime)
        # A unit alice's manager does not know: NotActivatable, from her manager's LoadState.
        err = alice.error("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [IDENT, {
            "bus_name": variant("s", NAME), "systemd_unit": variant("s", "relink-nope.service")}])
        assert err == "org.relink.Error.NotActivatable", err
        reply = alice.call("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [IDENT, {
            "bus_name": variant("s", NAME), "wake_on": variant("as", ["value-notified"]), "systemd_unit": variant("s", UNIT)}])
        assert "error" not in reply, reply
        # Bob names alice's unit for his own identifier: relinkd asks only
        # bob's manager (systemctl runs as bob), which does not run: NotReady.
        bob = OtherUser(bench.bus, BOB, runtime)
        assert "error" not in bob.call("/org/relink", MANAGER, "Register", "sa{sv}", [BOB_IDENT, {}])
        err = bob.error("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [BOB_IDENT, {
            "bus_name": variant("s", NAME), "systemd_unit": variant("s", UNIT)}])
        assert err == "org.relink.Error.NotReady", err
        before = kill_both_and_restart(d, first, root, NAME, out)
        wait_until(lambda: link_state(root, IDENT) == "connected", 30, "the link restored")
        value = pushed_until_delivered(bench, root, IDENT, out, before, "user-unit-open")
        second = value_relaunched(out, before, value, {"bus_name": NAME, "identifiers": [IDENT], "events": ["value-notified"]})
        values = [l["value"] for l in second if l["type"] == "event" and l["kind"] == "value-notified"]
        assert len(values) == len(set(values)), f"a value delivered twice: {values}"
        with open(invocation) as f:
            invocation_id, uid = f.read().split()
        assert len(invocation_id) == 32, "started by systemd (its INVOCATION_ID)"
        assert int(uid) == ALICE, "started by alice's own manager, as alice"
        # Her unit stopped (its client gone), then her manager: the next
        # start fails, NotReady naming her uid and the unit, in Status and the journal.
        stop_unit(run)
        stop_manager()
        tries = iter(range(1000))
        wait_until(lambda: "NotReady" in status_launch(root, IDENT).get("lastError", "")
                   or push(bench, f"no-manager-{next(tries)}"), 60, "a failed start", 0.5)
        why = status_launch(root, IDENT)["lastError"]
        assert f"uid {ALICE}" in why and UNIT in why, why
        wait_until(lambda: "relaunch-failed" in d.log_tail(400), 10, "the failed start journalled")
        failed = [l for l in d.log_tail(400).splitlines() if "relaunch-failed" in l]
        assert any("NotReady" in l and f"uid {ALICE}" in l and UNIT in l for l in failed), failed
    finally:
        stop_unit(run)
        for u in (alice, bob):
            if u:
                u.close()
        if first and first.poll() is None:
            first.kill()
            first.wait(10)
        root.close()
        d.kill9()
        disconnect_all(bench)
