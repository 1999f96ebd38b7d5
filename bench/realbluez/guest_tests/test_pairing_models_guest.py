"""Issue 24 on real bluetoothd 5.66, inside the VM (full suite only): the
pairing models beyond Just Works, through relinkd's `PairWith` and
`relinkctl pair --capability`. The lock's side is bluetoothd's default
agent (lock_agent.py) registered with a capability that forces the model,
since one bluetoothd owns both adapters (docs/real-bluez.md difference 31):

* passkey entry: the lock's agent `DisplayOnly` (bluetoothd gives it the
  passkey to show, `DisplayPasskey`), relinkd's `KeyboardOnly` (bluetoothd
  asks relinkd's agent `RequestPasskey`, forwarded as a `pairing-request`
  to relinkctl, which is given the passkey the lock showed on its
  terminal). A wrong passkey first: `AuthenticationFailed`, no bond; then
  the right one: bonded, the encrypted state read.
* numeric comparison: both `DisplayYesNo` (LE Secure Connections): relinkd
  refuses first (`--reject`: `AuthenticationFailed`, no bond), then
  accepts (`--confirm`): bonded.

What bluetoothd asked whom is recorded in LOGDIR/pairing-models.json
(the lock agent's lines, relinkctl's `pairing request` lines, bluetoothd's
passkey/confirmation callbacks). Run by
bench/realbluez/tests/test_real_pairing.py with RELINK_REALBLUEZ=full."""

import os
import re
import subprocess
import time
from typing import Optional

import pytest

from lock_agent import LockAgent, log_path
from realenv import IN_GUEST, LOGDIR, RELINKCTL, bluetoothd_log, bluez_version, ctl, ctl_ok, lock_world, wait_for
from test_pairing_guest import ID, LOCK_SERVICE, LOCK_STATE, Lock, forget_pairing, kinds

pytestmark = [
    pytest.mark.skipif(not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_pairing.py)"),
    pytest.mark.skipif(os.environ.get("RELINK_REALBLUEZ_FULL") != "1", reason="the full suite only (RELINK_REALBLUEZ=full)"),
]

FIGURES: dict = {}
# bluetoothd's debug lines for the kernel's pairing requests (adapter.c).
CALLBACKS = re.compile(r"(user_passkey_request_callback|user_passkey_notify_callback|user_confirm_request_callback"
                       r"|new_long_term_key_callback|bonding_complete|auth_failed_callback)\(\)[^\n]*")


def models_world(capability: str):
    agent = LockAgent(log_path(LOGDIR), capability)
    try:
        for attempt in (1, 2):
            world = lock_world("pairing-models.json", FIGURES, lock_args=("--lock-security", "encrypted"))
            try:
                bench, relinkd, figures = next(world)
                break
            except RuntimeError as e:
                # The first bench of a boot: under TCG the lock's program
                # once took longer than the bench's 30 s to register.
                FIGURES.setdefault("bench_start_retries", []).append(str(e)[:200])
                if attempt == 2:
                    raise
        forget_pairing(bench)
        wait_for(lambda: agent.registrations() >= 1, 30, "the lock side's agent registered")
        try:
            yield bench, relinkd, figures, agent
        finally:
            forget_pairing(bench)
            next(world, None)
    finally:
        agent.stop()


@pytest.fixture
def display_only_lock():
    yield from models_world("DisplayOnly")


@pytest.fixture
def display_yes_no_lock():
    yield from models_world("DisplayYesNo")


def connected_lock(bench, relinkd) -> Lock:
    lock = Lock(bench)
    relinkd.start()
    ctl_ok("register", ID)
    ctl_ok("connect", ID, lock.address, "--service", LOCK_SERVICE)
    wait_for(lambda: kinds(0, "connected"), 60, "connected to the lock")
    return lock


def link_up(lock: Lock) -> None:
    """After a failed pairing the kernel ends the link; relinkd's intent brings it back."""
    wait_for(lambda: lock.device()["Connected"] == "true" and lock.device()["ServicesResolved"] == "true",
             60, "the lock's link up", interval=1)


def pair(lock: Lock, capability: str, *flags: str, typed: Optional[callable] = None) -> dict:
    """relinkctl pair --capability; `typed`: a function returning the line to
    type on relinkctl's terminal (a pseudo-terminal: relinkctl asks there
    when no flag answers), called while relinkctl runs."""
    master, slave = os.openpty()
    t = time.monotonic()
    proc = subprocess.Popen([RELINKCTL, "pair", ID, lock.address, "--capability", capability, *flags],
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(slave)
    try:
        typed_line, typed_error = None, None
        if typed is not None:
            try:
                typed_line = typed()
                os.write(master, (typed_line + "\n").encode())
            except Exception as e:  # recorded: the test asserts on the result
                typed_error = str(e)[:300]
                proc.kill()
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return {"status": proc.returncode, "out": out.strip()[-400:], "err": err.strip()[-400:], "typed": typed_line,
            "typed_error": typed_error,
            "s": round(time.monotonic() - t, 2), "device": lock.device()}


def asked(agent: LockAgent, since: int) -> list[dict]:
    with agent.lock:
        return [{k: v for k, v in l.items() if k != "device"} for l in agent.lines[since:]
                if l.get("event") in ("request", "display", "cancel")]


def shown_passkey(agent: LockAgent, since: int) -> int:
    """The passkey bluetoothd gave the lock's agent to show (after line `since`)."""
    found: list[int] = []

    def displayed() -> bool:
        with agent.lock:
            found[:] = [l["passkey"] for l in agent.lines[since:] if l.get("event") == "display" and "passkey" in l]
        return bool(found)
    wait_for(displayed, 30, "the lock's agent shows a passkey", interval=0.2)
    return found[0]


def read_state(lock: Lock) -> dict:
    status, out, err = ctl("read", ID, lock.address, LOCK_SERVICE, LOCK_STATE, timeout=90)
    return {"status": status, "value": out.strip(), "error": err.strip()[-300:]}


def callbacks(since: int) -> list[str]:
    return [m.group(0)[:160] for m in CALLBACKS.finditer(bluetoothd_log()[since:])]


def bluez_at_least(major: int, minor: int) -> bool:
    """Whether the guest's bluez package is at least major.minor."""
    found = re.match(r"(\d+)\.(\d+)", bluez_version())
    return bool(found) and (int(found.group(1)), int(found.group(2))) >= (major, minor)


def test_passkey_entry_wrong_then_right(display_only_lock, request):
    """The lock shows a passkey, relinkd's client types it: a wrong one
    fails typed with no bond, the right one bonds."""
    if bluez_at_least(5, 81):
        # bluetoothd 5.81 (8e2cece67 "device: Attempt to elevate security on
        # Pair while connected"): a Pair on a connected LE device raises the
        # ATT channel's security instead of sending the kernel a Pair Device
        # with the caller's agent's capability, so the adapter's own (the
        # default agent's: the lock's DisplayOnly here) is used and relinkd's
        # KeyboardOnly is not; DisplayOnly on both sides cannot give MITM and
        # the lock's side refuses (SMP "Authentication requirements").
        # docs/real-bluez.md, gateway finding G12. Still run: an XPASS shows
        # the day relinkd pairs with its own capability there.
        request.node.add_marker(pytest.mark.xfail(
            reason="bluetoothd >= 5.81 pairs a connected LE device with the adapter's IO capability, "
                   "not the Pair caller's (docs/real-bluez.md, G12)", strict=False))
    bench, relinkd, figures, agent = display_only_lock
    case = figures.setdefault("passkey_entry", {})
    lock = connected_lock(bench, relinkd)
    log_at, line_at = len(bluetoothd_log()), len(agent.lines)
    wrong = pair(lock, "KeyboardOnly", typed=lambda: f"{(shown_passkey(agent, line_at) + 1) % 1_000_000:06d}")
    case["wrong"] = {**wrong, "lock_agent": asked(agent, line_at), "bluetoothd": callbacks(log_at)}
    assert wrong["status"] != 0 and "AuthenticationFailed" in wrong["err"], f"a wrong passkey: {case}"
    assert wrong["device"]["Paired"] != "true" and wrong["device"]["Bonded"] != "true", f"bonded with a wrong passkey: {case}"

    link_up(lock)
    log_at, line_at = len(bluetoothd_log()), len(agent.lines)
    right = pair(lock, "KeyboardOnly", typed=lambda: f"{shown_passkey(agent, line_at):06d}")
    case["right"] = {**right, "lock_agent": asked(agent, line_at), "bluetoothd": callbacks(log_at)}
    assert right["status"] == 0, f"the shown passkey: {case}"
    assert right["device"]["Paired"] == "true" and right["device"]["Bonded"] == "true", f"not bonded: {case}"
    assert right["device"]["Trusted"] == "true", f"not trusted: {case}"
    case["read"] = read_state(lock)
    assert case["read"]["status"] == 0, f"reading the encrypted state after pairing: {case}"


def test_numeric_comparison_rejected_then_confirmed(display_yes_no_lock):
    """Both sides DisplayYesNo: relinkd's client is asked to compare; a
    refusal fails typed with no bond, a confirmation bonds."""
    bench, relinkd, figures, agent = display_yes_no_lock
    case = figures.setdefault("numeric_comparison", {})
    lock = connected_lock(bench, relinkd)
    log_at, line_at = len(bluetoothd_log()), len(agent.lines)
    rejected = pair(lock, "DisplayYesNo", "--reject")
    case["rejected"] = {**rejected, "lock_agent": asked(agent, line_at), "bluetoothd": callbacks(log_at)}
    assert rejected["status"] != 0 and "AuthenticationFailed" in rejected["err"], f"a refused comparison: {case}"
    assert rejected["device"]["Paired"] != "true", f"bonded although refused: {case}"

    link_up(lock)
    log_at, line_at = len(bluetoothd_log()), len(agent.lines)
    confirmed = pair(lock, "DisplayYesNo", "--confirm")
    case["confirmed"] = {**confirmed, "lock_agent": asked(agent, line_at), "bluetoothd": callbacks(log_at)}
    assert confirmed["status"] == 0, f"a confirmed comparison: {case}"
    assert "pairing request" in confirmed["out"] and "confirmation" in confirmed["out"], (
        f"relinkctl was not asked to compare: {case}")
    assert confirmed["device"]["Paired"] == "true" and confirmed["device"]["Bonded"] == "true", f"not bonded: {case}"
    case["read"] = read_state(lock)
    assert case["read"]["status"] == 0, f"reading the encrypted state after pairing: {case}"
