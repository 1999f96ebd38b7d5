"""The peripheral role's restart-survival matrix on real bluetoothd 5.66,
inside the VM (issue 23 item 5): relinkd on hci0 hosts a program's service
and advertisement, a remote central on hci2 (plain org.bluez calls) uses
it; each restart kind x what the central was doing:

  kinds: relinkd SIGKILL, relinkd SIGTERM, "reboot" (relinkd SIGTERM,
  bluetoothd SIGTERM and started again, then relinkd started on the same
  state directory), bluetoothd SIGKILL and SIGTERM restarts (the bench's
  restart_bluez), relinkd's adapter power-cycled (off 1 s);
  states: advertising only, central connected, central subscribed.

Before the restart the program leaves; in the connected states the central
then writes a write-only characteristic with response, which relinkd
stores (bluetoothd waits for relinkd's answer: no write-without-response
on it, docs/real-bluez.md difference 27). After the restart, with no
program attached, each case checks:
  * advertising resumes: bluetoothd has relinkd's advertisement again
    (LEAdvertisingManager1.ActiveInstances), and the central, which forgot
    the device, finds it in a new advertising report (when not connected);
  * the services reappear on the central, and relinkd answers a static read;
  * the program registering again gets its restored state (services,
    advertisement) in the Register reply, and the stored write once;
  * the central gets notifications again: a central that is no longer
    subscribed on bluetoothd's side (a new link, or attributes registered
    anew) subscribes again, as real BlueZ requires of a central that is
    not bonded (it keeps CCCD state only for bonded centrals).
What the central found (still connected? still notifying?) and the
program's restored subscribers are recorded per case.

In the VM the central shares bluetoothd with relinkd: a bluetoothd restart
restarts the central's too (a real central is another machine, which would
only see the link drop). One bench (the lock on hci1, unused) and one
relinkd serve every case; each case uses an identifier of its own and
forgets it at the end. Per-case results and timings go to
LOGDIR/peripheral-restarts.json as each case ends. Run by
bench/realbluez/tests/test_real_peripheral.py (RELINK_REALBLUEZ=1: two
cases; full: all 18); skipped elsewhere. Select cases with -k (ids:
STATE-KIND)."""

import json
import os
import sys
import time

import pytest

from realenv import (Results, IN_GUEST, LOGDIR, REPO, Relinkd, bluez_get, ctl, play_restart, recover_bluetoothd, start_bench,
                     stop_bench, wait_for)

sys.path.insert(0, os.path.join(REPO, "bench", "e2e", "tests"))
from pbench_fixtures import HUB_SERVICE, SERVICE, STATIC, STREAM  # noqa: E402
from remote_central import PeripheralProgram, RemoteCentral, full_uuid  # noqa: E402

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_peripheral.py)")

SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket"
KINDS = ["relinkd_kill", "relinkd_term", "reboot", "bluetoothd_kill", "bluetoothd_term", "power_cycle"]
STATES = ["advertising", "connected", "subscribed"]
# Kinds in which bluetoothd, still running, sees a subscribed link go down
# and calls StopNotify (an exiting SIGTERMed one powers the adapter off first).
UNSUBSCRIBED_BY_BLUETOOTHD = ("bluetoothd_term", "power_cycle")
# Kinds in which the link goes down (relinkd's own restarts keep it: the
# controller and bluetoothd are still there).
LINK_DROPPED = ("reboot", "bluetoothd_kill", "bluetoothd_term", "power_cycle")

# Write only: bluetoothd 5.66 waits for relinkd's answer to a write request
# here (with write-without-response it would answer the central itself).
SETTING = "8e7f3a04-4b2c-4d1e-9a3f-72656c696e6b"
SERVICE_DEF = {**HUB_SERVICE, "characteristics": HUB_SERVICE["characteristics"] + [
    {"uuid": SETTING, "properties": ["write"], "permissions": ["writeable"]}]}
ROLE_EVENTS = ("read-request", "write-request", "subscribed", "unsubscribed", "ready-to-update")
RESULTS = os.path.join(LOGDIR, "peripheral-restarts.json")


def active_advertisements() -> int:
    value = bluez_get("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "ActiveInstances")
    return int(value) if value and value.isdigit() else 0


class World:
    def __init__(self):
        self.bench = start_bench("--lock", "lock")
        self.relinkd = Relinkd()
        self.relinkd.start()
        self.address = bluez_get("/org/bluez/hci0", "org.bluez.Adapter1", "Address")
        assert self.address, "hci0 has no address"
        self.central = RemoteCentral(SYSTEM_BUS, "hci2")
        self.results = Results(RESULTS)
        self.number = 0

    def close(self) -> None:
        self.central.close()
        self.relinkd.stop()
        stop_bench(self.bench)


@pytest.fixture(scope="module")
def world():
    w = World()
    yield w
    w.close()


class Case:
    def __init__(self, world: World, state: str, kind: str):
        self.w = world
        self.c = world.central
        self.state, self.kind = state, kind
        world.number += 1
        self.id = f"org.example.hub{world.number}"
        self.local_name = f"Hub-{world.number}"
        self.program: PeripheralProgram | None = None
        self.timings: dict[str, float] = {}
        self.seen: dict = {}
        self.crashes: list[dict] = []
        self.t0 = time.monotonic()

    def mark(self, name: str, since: float) -> None:
        self.timings[name] = round(time.monotonic() - since, 2)

    # --- bluetoothd's crashes (docs/real-bluez.md difference 19) ----------
    def recover_bluetoothd(self, when: str) -> None:
        recover_bluetoothd(self.w.bench, self.crashes, when)

    # --- the central ---------------------------------------------------------
    def find(self, timeout: float = 90) -> None:
        """The central forgets relinkd's device and scans until a new report
        names the advertisement. btvirt sends one report per start of a scan
        or of advertising, and the kernel drops it when it comes before the
        scan's start has completed (pitfall 1 of the probe): each round scans
        for 6 s, then starts the scan again."""
        deadline = time.monotonic() + timeout
        while True:
            self.c.forget(self.w.address)
            try:
                self.c.discover(self.local_name, timeout=6)
                return
            except AssertionError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"the central did not find {self.local_name!r} in {timeout} s "
                                         f"(ActiveInstances {active_advertisements()})") from None

    def services_found(self) -> bool:
        try:
            return full_uuid(SERVICE) in self.c.services(self.w.address)
        except Exception:  # bluetoothd restarting
            return False

    def connect(self, timeout: float = 60) -> None:
        self.c.connect(self.w.address, timeout=timeout)
        wait_for(self.services_found, timeout, "the service on the central")

    def path(self, characteristic: str) -> str:
        return self.c.char_path(self.w.address, SERVICE, characteristic)

    def notifying(self, path: str) -> bool:
        try:
            return bool(self.c.get(path, "org.bluez.GattCharacteristic1", "Notifying"))
        except Exception:
            return False

    def notified(self, value: bytes, timeout: float, what: str) -> None:
        """Updates the program's STREAM value until the central has it
        (a notification sent before bluetoothd had the CCCD would be lost;
        the central keeps only those it received)."""
        def arrived() -> bool:
            path = self.path(STREAM)
            if value in self.c.notifications(path):
                return True
            try:
                self.program.update(SERVICE, STREAM, value)
            except Exception as e:  # e.g. UpdateQueueFull while the central is not subscribed yet
                self.seen.setdefault("update_refused", str(e)[:200])
            return False
        wait_for(arrived, timeout, what, interval=1.0)

    # --- the case ----------------------------------------------------------
    def set_up(self) -> None:
        t = time.monotonic()
        self.recover_bluetoothd("before the case")
        self.program = PeripheralProgram(SYSTEM_BUS, self.id)
        self.program.publish(SERVICE_DEF)
        self.program.advertise({"localName": self.local_name, "serviceUUIDs": [SERVICE], "discoverable": True,
                                "connectable": True})
        wait_for(lambda: active_advertisements() >= 1, 30, "relinkd's advertisement registered")
        self.find()
        if self.state != "advertising":
            self.connect()
            if self.state == "subscribed":
                self.c.start_notify(self.path(STREAM))
                self.program.wait_event("subscribed", timeout=30)
                self.notified(b"before", 30, "a value at the central before the restart")
        self.program.ack_all()
        self.program.leave(self.c)
        self.program = None
        if self.state != "advertising":
            # Acknowledged to the central by relinkd, no program attached: it must reach the program once.
            self.wrote = bytes([KINDS.index(self.kind), STATES.index(self.state)])
            self.c.write(self.path(SETTING), self.wrote, with_response=True)
        else:
            self.wrote = None
        self.mark("set_up_s", t)

    def check(self, t0: float) -> None:
        c, address = self.c, self.w.address
        # Advertising resumes: bluetoothd has it, and a new report reaches the central.
        wait_for(lambda: active_advertisements() >= 1, 60, "relinkd's advertisement registered again", interval=0.2)
        self.mark("advertising_s", t0)
        if self.state != "advertising" and self.kind in LINK_DROPPED:
            # btvirt has no supervision timeout: bluetoothd itself drops the
            # link (a SIGKILLed one's kept link: the new daemon, within 1 s).
            try:
                wait_for(lambda: not c.connected(address), 15, "the central's link down", interval=0.2)
            except AssertionError:
                pass
        if self.state != "advertising":
            self.seen["link_kept"] = c.connected(address)
        if self.state == "advertising" or not c.connected(address):
            self.find()
            self.mark("found_s", t0)
        if not c.connected(address):
            self.connect()
        else:
            wait_for(self.services_found, 60, "the service again on the central")
        self.mark("services_s", t0)
        assert c.read(self.path(STATIC)) == b"S1", "relinkd answers the static read with no program"

        # The program comes back: its restored state first, then the stored write, once.
        self.program = PeripheralProgram(SYSTEM_BUS, self.id)
        restored = self.program.restored.get("peripheral_manager")
        assert restored, f"no peripheral_manager in the restored state: {self.program.restored}"
        restored = json.loads(restored) if isinstance(restored, str) else restored
        assert [s["uuid"].lower() for s in restored["services"]] == [SERVICE]
        assert (restored.get("advertisement") or {}).get("localName") == self.local_name
        self.seen["restored_subscribers"] = restored.get("subscribers")
        if self.wrote is not None:
            _, _, payload = self.program.wait_event("write-request", timeout=30)
            assert payload["writeRequest"]["value"] == list(self.wrote)
            self.seen["stored_write"] = payload["writeRequest"]
        # Notifications again: subscribe again where bluetoothd no longer has the CCCD.
        path = self.path(STREAM)
        self.seen["still_notifying"] = self.notifying(path)
        if not self.seen["still_notifying"]:
            seq = max((e[0] for e in self.program.events()), default=0)
            c.start_notify(path)
            self.program.wait_event("subscribed", timeout=30, after=seq)
        self.notified(b"after", 60, "a value at the central after the restart")
        self.mark("notification_s", t0)
        if self.kind == "bluetoothd_term":
            self.seen["release_logged"] = "bluetoothd released the advertisement" in self.w.relinkd.log()[self.log_at:]
        role = [e[1] for e in self.program.events() if e[1] in ROLE_EVENTS]
        self.seen["role_events"] = role
        # Real bluetoothd calls StopNotify when it drops a subscribed link
        # itself, also as a SIGTERMed bluetoothd powers the adapter off
        # (BlueZoo's SIGKILL-only restart never does): an unsubscription,
        # stored and delivered in order; across relinkd's own restarts and a
        # crash nobody tells relinkd, and the central stays listed.
        unsubscribed = self.state == "subscribed" and self.kind in UNSUBSCRIBED_BY_BLUETOOTHD
        want = (["write-request"] if self.wrote is not None else []) + (["unsubscribed"] if unsubscribed else []) \
            + ([] if self.seen["still_notifying"] else ["subscribed"])
        assert role == want, f"the stored write and the unsubscription once, in order, then the new subscription: {role}"
        want_subscribers = [{"service": SERVICE, "characteristic": STREAM, "centrals": ["unknown"]}] \
            if self.state == "subscribed" and not unsubscribed else []
        assert self.seen["restored_subscribers"] == want_subscribers

    def run(self) -> None:
        self.set_up()
        self.log_at = len(self.w.relinkd.log())
        t0 = time.monotonic()
        try:
            play_restart(self.kind, self.w.relinkd, self.w.bench)
        finally:
            self.recover_bluetoothd("after the restart")
        self.mark("restart_s", t0)
        self.check(t0)

    def clean_up(self) -> None:
        """Leaves the next case a running relinkd with no identifier hosted,
        nothing advertising on hci0, and the central not connected."""
        self.recover_bluetoothd("in the case")
        if self.program is not None:
            self.program.close()
        r = self.w.relinkd
        if r.proc is None or r.proc.poll() is not None:
            r.start()
        ctl("forget", self.id)
        self.c.disconnect(self.w.address)
        self.c.forget(self.w.address)
        try:
            wait_for(lambda: active_advertisements() == 0, 30, "no advertisement left after forget")
        except AssertionError as e:
            self.seen["clean_up"] = str(e)


CASES = [(s, k) for s in STATES for k in KINDS]


@pytest.mark.parametrize("state,kind", CASES, ids=[f"{s}-{k}" for s, k in CASES])
def test_peripheral_restart_survival(world, state, kind):
    case = Case(world, state, kind)
    log_mark = len(world.relinkd.log().splitlines())
    error = None
    try:
        case.run()
    except BaseException as e:  # recorded, then raised
        error = f"{type(e).__name__}: {e}"
        raise
    finally:
        try:
            case.clean_up()
        finally:
            record = {"case": f"{state}-{kind}", "state": state, "kind": kind,
                      "result": "fail" if error else "pass", "total_s": round(time.monotonic() - case.t0, 2),
                      **case.timings, **case.seen}
            if case.crashes:
                record["bluetoothd_crashed"] = case.crashes
            if error:
                record["error"] = error[:600]
                new = world.relinkd.log().splitlines()[log_mark:]
                record["relinkd_log"] = [l for l in new if any(
                    w in l for w in ("warning", "error", "notice", "hosted", "advertis", "registered"))][-25:]
            world.results.add(record)
