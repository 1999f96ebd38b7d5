"""The restart-survival suite on real bluetoothd, inside the VM (5.66) or a
booted gateway image (bench/gateway/tests/test_survival.py: 5.66 or 5.82,
Debian's bluetooth.service): every
restart kind x every state of an intent x the bench's lock and band. Each
case sets one intent up on its own restore identifier, plays one restart,
and checks what the user is promised afterwards:

  * scanning: the identifier still scans, and reports `discovered` again;
  * pending (Connect to a peripheral that is away, never seen by this
    bluetoothd, no timeout): the intent is still there, not `connected`, and
    the peripheral is connected (and its subscription's values arrive) once
    it is back in range;
  * connecting (a known peripheral went away; relinkd's Device1.Connect is
    in flight when the restart comes): the same;
  * subscribed (values flowing): values arrive again;
and in every case with a link, forgetting the identifier afterwards takes
the link down, as before the restart.

Restart kinds: relinkd SIGKILL and SIGTERM (then started again), bluetoothd
SIGKILL and SIGTERM restarts (the bench's restart_bluez), the central
adapter powered off for 1 s, and "reboot": relinkd stopped with SIGTERM,
bluetoothd stopped with SIGTERM (which powers every adapter off, so the
kernel drops every link) and started again, then relinkd started again; the
VM itself, the kernel and btvirt's controllers are not restarted (the bench
cannot re-create a controller under a running peripheral program).

One bench (lock and band, three controllers) and one relinkd serve every
case; each case forgets its identifier at the end. Waits are bounded
(wait_until). Each case's timings go to LOGDIR/restart-survival.json as
soon as it ends. Run by bench/realbluez/tests/test_real_restart_survival.py
through run-vm (RELINK_REALBLUEZ=full); skipped elsewhere. Select cases with
pytest's -k (ids: PERIPHERAL-STATE-KIND)."""

import json
import os
import subprocess
import time
from typing import Callable, Optional

import pytest

from realenv import (Results, HEART_RATE, HR_MEASUREMENT, IN_GUEST, LOGDIR, Relinkd, band_counters, ctl,
                     ctl_ok, kernel_connections, play_restart, recover_bluetoothd, start_bench, stop_bench, wait_for)

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_restart_survival.py)")

LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
CHARACTERISTIC = {"lock": (LOCK_SERVICE, LOCK_STATE), "band": (HEART_RATE, HR_MEASUREMENT)}

KINDS = ["relinkd_kill", "relinkd_term", "bluetoothd_kill", "bluetoothd_term", "central_power_cycle",
         "reboot"]
STATES = ["scanning", "pending", "connecting", "subscribed"]
PERIPHERALS = ["lock", "band"]
# States relinkd reports while it is working on an intent whose peripheral is
# away (docs/api/Manager1.md); never "connected", "failed" or "cancelled".
LOOKING = ("trying-", "connecting", "waiting-for-services", "backing-off", "waiting-for-adapter")

RESULTS = os.path.join(LOGDIR, "restart-survival.json")


class World:
    def __init__(self):
        self.bench = start_bench("--lock", "lock", "--band", "band")
        self.relinkd = Relinkd()
        self.relinkd.start()
        self.results = Results(RESULTS)

    def close(self) -> None:
        self.relinkd.stop()
        stop_bench(self.bench)


@pytest.fixture(scope="module")
def world():
    w = World()
    yield w
    w.close()


def events_after(identifier: str, after: int) -> list[dict]:
    status, out, _ = ctl("--json", "events", identifier, "--after", str(after))
    return json.loads(out).get("events", []) if status == 0 else []


def last_sequence(identifier: str) -> int:
    status, out, _ = ctl("--json", "events", identifier)
    evs = json.loads(out).get("events", []) if status == 0 else []
    return max((e.get("sequence", 0) for e in evs), default=0)


def kinds_after(identifier: str, after: int, *kinds: str) -> list[dict]:
    return [e for e in events_after(identifier, after) if e.get("kind") in kinds]


def status_of(identifier: str) -> Optional[dict]:
    """This identifier's entry in relinkctl status (None when relinkd or it is absent)."""
    status, out, _ = ctl("--json", "status")
    if status != 0:
        return None
    doc = json.loads(out)
    return next((i for i in doc.get("identifiers", []) if i.get("id") == identifier), None)


def connection_state(identifier: str) -> Optional[str]:
    entry = status_of(identifier)
    conns = (entry or {}).get("connections") or []
    return conns[0].get("state") if conns else None


def dbus_bluez(path: str, method: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.bluez", path, method, *args],
                          capture_output=True, text=True, timeout=15)


def device_connected(path: str) -> bool:
    out = dbus_bluez(path, "org.freedesktop.DBus.Properties.Get", "string:org.bluez.Device1",
                     "string:Connected")
    return out.returncode == 0 and "true" in out.stdout


def forget_device(path: str) -> None:
    """Removes the peripheral's Device1 (and bluetoothd's storage of it) from
    hci0: the next intent starts from a peripheral this gateway never saw."""
    dbus_bluez("/org/bluez/hci0", "org.bluez.Adapter1.RemoveDevice", f"objpath:{path}")


class Case:
    def __init__(self, world: World, peripheral: str, state: str, kind: str):
        self.w = world
        self.bench = world.bench
        self.relinkd = world.relinkd
        self.peripheral = peripheral
        self.state = state
        self.kind = kind
        self.id = f"survival.{peripheral}.{state}.{kind}"
        self.address = self.bench.address(peripheral)
        self.path = self.bench.path(peripheral)
        self.service, self.char = CHARACTERISTIC[peripheral]
        self.pushed = 0
        self.crashes: list[dict] = []
        self.timings: dict[str, float] = {}
        self.t0 = time.monotonic()

    def mark(self, name: str, since: float) -> float:
        self.timings[name] = round(time.monotonic() - since, 2)
        return time.monotonic()

    def recover_bluetoothd(self, when: str) -> bool:
        return recover_bluetoothd(self.bench, self.crashes, when)

    # --- the peripheral -------------------------------------------------
    def advertise_again(self) -> None:
        """One more advertising report (btvirt sends one per start of
        advertising; a real peripheral advertises periodically)."""
        self.bench.cmd("set_advertising", peripheral=self.peripheral, on=False)
        self.bench.cmd("set_advertising", peripheral=self.peripheral, on=True)

    def values_after(self, seq: int) -> bool:
        """Whether values newer than event `seq` arrived; the lock is made to
        notify (a push) at each poll, the band streams by itself."""
        if self.peripheral == "band":
            evs = events_after(self.id, seq)
            return len(band_counters(evs, seq)) >= 2
        self.pushed += 1
        self.bench.try_cmd("push", peripheral="lock", value=f"{0x40 + self.pushed % 0x40:02x}")
        return bool(kinds_after(self.id, seq, "value-notified"))

    # --- set-up per state -------------------------------------------------
    def connect_and_subscribe(self) -> None:
        ctl_ok("connect", self.id, self.address, "--service", self.service)
        ctl_ok("subscribe", self.id, self.address, self.service, self.char)

    def set_up(self) -> None:
        t = time.monotonic()
        self.recover_bluetoothd("before the case")
        self.bench.cmd("in_range", peripheral=self.peripheral)
        ctl_ok("register", self.id)
        if self.state == "scanning":
            ctl_ok("scan", self.id, self.service)
            self.wait_discovered(0, 45, "discovered before the restart")
        elif self.state == "pending":
            self.bench.cmd("out_of_range", peripheral=self.peripheral)
            wait_for(lambda: not device_connected(self.path), 30, "the peripheral's link down")
            forget_device(self.path)
            self.connect_and_subscribe()
            wait_for(lambda: (connection_state(self.id) or "").startswith(LOOKING), 30,
                     "relinkd looking for the away peripheral")
        else:
            self.connect_and_subscribe()
            wait_for(lambda: self.values_after(0), 90, "values before the restart", interval=0.5)
            if self.state == "connecting":
                seq = last_sequence(self.id)
                self.bench.cmd("out_of_range", peripheral=self.peripheral)
                wait_for(lambda: kinds_after(self.id, seq, "disconnected"), 30, "disconnected")
                wait_for(lambda: connection_state(self.id) == "connecting", 60,
                         "relinkd's Connect in flight (state connecting)", interval=0.2)
        self.mark("set_up_s", t)

    def wait_discovered(self, seq: int, timeout: float, what: str) -> None:
        """A discovered event after `seq`, re-advertising every 4 s as a
        periodic advertiser would be seen."""
        last = [time.monotonic()]

        def found():
            if kinds_after(self.id, seq, "discovered"):
                return True
            if time.monotonic() - last[0] > 4:
                self.advertise_again()
                last[0] = time.monotonic()
            return False
        wait_for(found, timeout, what, interval=0.3)

    # --- the restart ------------------------------------------------------
    def restart(self) -> None:
        try:
            self.play_restart()
        except RuntimeError:
            # The bench's command failed: when bluetoothd died under it, the
            # case goes on once it is back (recorded); else the bench failed.
            # (The bench reaps a dead bluetoothd a moment after its callers
            # see NoReply.)
            try:
                wait_for(lambda: not (self.bench.try_cmd("status").get("bluetoothd") or {}).get("running", True),
                         10, "the bench to see bluetoothd gone", interval=0.2)
            except AssertionError:
                raise RuntimeError(f"{self.kind}: the bench's command failed with bluetoothd running") from None
            self.recover_bluetoothd("during the restart")
        self.recover_bluetoothd("after the restart")

    def play_restart(self) -> None:
        play_restart(self.kind, self.relinkd, self.bench)

    # --- the promise --------------------------------------------------------
    def check(self, seq: int) -> None:
        if self.state == "scanning":
            wait_for(lambda: (status_of(self.id) or {}).get("scanning") is True, 30,
                     "the identifier still scanning in relinkctl status")
            t = time.monotonic()
            self.wait_discovered(seq, 60, "discovered after the restart")
            self.mark("promise_s", t)
            return
        if self.state in ("pending", "connecting"):
            # The intent is still there and relinkd does not claim the link.
            state = wait_for(lambda: connection_state(self.id), 30, "the intent in relinkctl status")
            assert state.startswith(LOOKING), f"{self.id}: state {state!r} while the peripheral is away"
            assert not kinds_after(self.id, seq, "connected", "restored"), "connected while away"
            t = time.monotonic()
            self.bench.cmd("in_range", peripheral=self.peripheral)
            wait_for(lambda: kinds_after(self.id, seq, "connected", "restored"), 120,
                     "connected once back in range", interval=0.3)
            t = self.mark("in_range_to_connected_s", t)
            wait_for(lambda: self.values_after(seq), 60, "values after reconnecting", interval=0.5)
            self.mark("connected_to_values_s", t)
            return
        t = time.monotonic()
        wait_for(lambda: self.values_after(seq), 120, "values again after the restart", interval=0.5)
        self.mark("promise_s", t)

    def release(self) -> None:
        """After the restart, forgetting the identifier still ends its link
        (docs/api/Manager1.md, Unregister: links no other identifier wants
        are disconnected); relinkd must not have taken its own link for
        another program's."""
        t = time.monotonic()
        ctl_ok("forget", self.id)
        if self.state != "scanning":
            wait_for(lambda: not device_connected(self.path), 20, "the link down after forget", interval=0.2)
        self.mark("forget_to_link_down_s", t)

    def run(self) -> None:
        self.set_up()
        seq = last_sequence(self.id)
        t = time.monotonic()
        self.restart()
        self.mark("restart_s", t)
        self.check(seq)
        self.release()

    def clean_up(self, failed: bool) -> None:
        """Leaves the next case a running relinkd without this identifier, the
        peripheral's program running, in range and not connected (after a
        failure, its adapter power-cycled: no link of any kind survives)."""
        self.recover_bluetoothd("in the case")
        if self.relinkd.proc is None or self.relinkd.proc.poll() is not None:
            self.relinkd.start()
        ctl("forget", self.id)
        spec = self.bench.try_cmd("status").get("state", {}).get(self.peripheral, {})
        if not spec.get("running", True):
            self.bench.try_cmd("start_peripheral", peripheral=self.peripheral)
        if failed:
            self.bench.try_cmd("out_of_range", peripheral=self.peripheral)
        self.bench.try_cmd("in_range", peripheral=self.peripheral)
        try:
            wait_for(lambda: not device_connected(self.path), 30, "the link gone after forget")
        except AssertionError:
            dbus_bluez(self.path, "org.bluez.Device1.Disconnect")


CASES = [(p, s, k) for p in PERIPHERALS for s in STATES for k in KINDS]


@pytest.mark.parametrize("peripheral,state,kind", CASES, ids=[f"{p}-{s}-{k}" for p, s, k in CASES])
def test_restart_survival(world, peripheral, state, kind):
    case = Case(world, peripheral, state, kind)
    log_mark = len(world.relinkd.log().splitlines())
    error = None
    try:
        case.run()
    except BaseException as e:  # recorded, then raised
        error = f"{type(e).__name__}: {e}"
        raise
    finally:
        status = ctl("--json", "status")[1] if error else ""
        # The kernel's own list of hci0's links, beside bluetoothd's view
        # (G10: bluetoothd kept `Connected` for a link its log says went down).
        kernel = kernel_connections() if error else ""
        try:
            case.clean_up(failed=error is not None)
        finally:
            record = {"case": f"{peripheral}-{state}-{kind}", "peripheral": peripheral, "state": state,
                      "kind": kind, "result": "fail" if error else "pass",
                      "total_s": round(time.monotonic() - case.t0, 2), **case.timings}
            if case.crashes:
                record["bluetoothd_crashed"] = case.crashes
            if error:
                record["error"] = error[:600]
                record["status"] = " ".join(status.split())[:800]
                record["kernel_connections"] = kernel
                record["bluez_connected"] = device_connected(case.path)
                new = world.relinkd.log().splitlines()[log_mark:]
                record["relinkd_log"] = [l for l in new if any(
                    w in l for w in ("warning", "error=", "ignored", "connected route", "disconnected",
                                     "timed out", "waiting-for", "restored"))][-25:]
            world.results.add(record)
