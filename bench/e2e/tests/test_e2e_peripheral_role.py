"""relinkd's peripheral role seen from a remote central on another bench
adapter (issue 23): the central discovers relinkd's advertisement, connects,
finds the services, reads (static, cached, dynamic answered by the
program), writes (with and without response; stored while no program is
attached and delivered when it returns, once and in order), subscribes and
gets the program's updates, also past relinkd's update window."""

import asyncio
import json

import pytest
from dbus_fast import Message, Variant

from e2e_harness import DBusCallError, wait_until
from pbench_fixtures import (CACHED, COMMAND, DYNAMIC, IDENTIFIER, LOCAL_NAME, RELINKD_ADDRESS, SERVICE,
                             STATIC, STREAM, Hub)
from remote_central import PeripheralProgram, RemoteCentral, full_uuid




def hear_names(c: RemoteCentral, wanted: set, what: str) -> None:
    """The central forgets relinkd's adapter and scans until every name in
    `wanted` was the Name of its Device1 (the adapter's advertisements take
    turns, and the Name follows the last report), within 15 s."""
    c.forget(RELINKD_ADDRESS)
    names: set = set()

    def heard() -> bool:
        c.error_of(c.adapter, "org.bluez.Adapter1", "StartDiscovery", destination="org.bluez")
        try:
            names.add(c.get(c.device_path(RELINKD_ADDRESS), "org.bluez.Device1", "Name"))
        except DBusCallError:
            pass
        return wanted <= names
    wait_until(heard, 15, f"{what} in the central's reports: {names}")
    c.error_of(c.adapter, "org.bluez.Adapter1", "StopDiscovery", destination="org.bluez")


def request_of(event: tuple) -> int:
    payload = event[2]
    return next(iter(payload.values()))["request"]


def test_a_remote_central_discovers_connects_reads_writes_and_is_notified(hub):
    c, program = hub.central, hub.program
    found = c.discover(LOCAL_NAME)
    assert found["Address"] == RELINKD_ADDRESS
    assert full_uuid(SERVICE) in found["UUIDs"], found
    c.connect(RELINKD_ADDRESS)
    services = c.services(RELINKD_ADDRESS)
    assert sorted(services[full_uuid(SERVICE)]) == sorted(full_uuid(u) for u in (STATIC, CACHED, DYNAMIC, COMMAND, STREAM))

    # A static value: relinkd answers, the program is not asked.
    assert c.read(hub.path(STATIC)) == b"S1"
    # A dynamic value: a read-request event, the program's answer.
    pending = c.read_later(hub.path(DYNAMIC))
    ev = program.wait_event("read-request")
    assert ev[2]["readRequest"]["characteristic"] == {"service": SERVICE, "characteristic": DYNAMIC}
    assert ev[2]["readRequest"]["central"] == pbench_address(hub)
    program.pm("Respond", "tay", [request_of(ev), b"dyn"])
    assert RemoteCentral.outcome(pending.result(15)) == b"dyn"
    # An error answer reaches the central as the ATT error BlueZ reports.
    pending = c.read_later(hub.path(DYNAMIC))
    ev = program.wait_event("read-request", after=ev[0])
    program.pm("RespondWithError", "ts", [request_of(ev), "readNotPermitted"])
    assert RemoteCentral.outcome(pending.result(15)) == ("error", "org.bluez.Error.NotPermitted")

    # A write with response waits for the program; one without does not.
    pending = c.write_later(hub.path(COMMAND), b"\x01\x02")
    ev = program.wait_event("write-request", after=ev[0])
    assert ev[2]["writeRequest"]["value"] == [1, 2] and ev[2]["writeRequest"]["withResponse"] is True
    assert not pending.done(), "the central's write waits for the program's answer"
    program.pm("Respond", "tay", [request_of(ev), b""])
    assert RemoteCentral.outcome(pending.result(15)) is None
    c.write(hub.path(COMMAND), b"\x03", with_response=False)
    ev = program.wait_event("write-request", after=ev[0])
    assert ev[2]["writeRequest"]["value"] == [3] and ev[2]["writeRequest"]["request"] == 0

    # Subscribe: a subscribed event, then every update in order.
    c.start_notify(hub.path(STREAM))
    program.wait_event("subscribed", after=ev[0])
    for i in range(10):
        program.update(SERVICE, STREAM, bytes([i]))
    wait_until(lambda: len(c.notifications(hub.path(STREAM))) >= 10, 15, "10 notifications")
    assert c.notifications(hub.path(STREAM)) == [bytes([i]) for i in range(10)]
    # A cacheable value: the program's update is what the central reads.
    program.update(SERVICE, CACHED, b"\x2a")
    pending = c.read_later(hub.path(CACHED))
    ev = program.wait_event("read-request", after=ev[0])
    program.pm("Respond", "tay", [request_of(ev), b"\x2b"])
    assert RemoteCentral.outcome(pending.result(15)) == b"\x2b"


def pbench_address(hub: Hub) -> str:
    return hub.bench.peripherals["remote"]["address"]


def test_without_a_program_cached_reads_are_answered_and_writes_wait_for_it(hub):
    c, program = hub.central, hub.program
    hub.connect()
    c.start_notify(hub.path(STREAM))
    program.wait_event("subscribed")
    program.update(SERVICE, CACHED, b"\x2a")
    program.ack_all()
    program.leave(c)
    hub.program = None

    # No program: the cached value, ATT 0x0E for the dynamic one, writes accepted.
    assert wait_until(lambda: c.read(hub.path(CACHED)) == b"\x2a", 10, "the cached value")
    with pytest.raises(DBusCallError) as e:
        c.read(hub.path(DYNAMIC))
    assert (e.value.name, e.value.text) == ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e")
    assert c.read(hub.path(STATIC)) == b"S1"
    for value, with_response in ((b"\x0a", True), (b"\x0b", False), (b"\x0c", True)):
        c.write(hub.path(COMMAND), value, with_response)

    # relinkd restarts meanwhile: the stored writes are not lost.
    hub.relinkd.kill9()
    hub.relinkd.start()

    # The program comes back: the restored state first, then each write once, in order.
    back = PeripheralProgram(hub.bench.bus, IDENTIFIER)
    hub.program = back
    restored = json.loads(back.restored["peripheral_manager"])
    assert [s["uuid"] for s in restored["services"]] == [SERVICE]
    assert restored["advertisement"]["localName"] == LOCAL_NAME
    assert restored["subscribers"] == [{"service": SERVICE, "characteristic": STREAM, "centrals": ["unknown"]}]
    assert restored["cachedValues"] == [{"service": SERVICE, "characteristic": full_uuid(CACHED), "value": [0x2a]}]
    wait_until(lambda: len([e for e in back.events() if e[1] == "write-request"]) >= 3, 15, "the three stored writes")
    writes = [e[2]["writeRequest"] for e in back.events() if e[1] == "write-request"]
    assert [(w["value"], w["withResponse"], w["request"]) for w in writes] == [
        ([10], True, 0), ([11], False, 0), ([12], True, 0)]
    assert [e[1] for e in back.events()] == ["write-request"] * 3, "nothing acknowledged comes again"


def test_an_update_past_the_window_is_refused_then_ready_to_update_follows(hub):
    c, program = hub.central, hub.program
    hub.connect()
    c.start_notify(hub.path(STREAM))
    program.wait_event("subscribed")

    # 40 updates at once (not waiting for replies): past relinkd's window of 16
    # when relinkd takes the calls faster than it hands updates to the bus,
    # which a burst does nearly always (up to 5 bursts until one is refused).
    accepted: list[bytes] = []
    refused: list[int] = []
    for burst_number in range(5):
        calls = [Message(destination="org.relink", path=program.path, interface="org.relink.PeripheralManager1",
                         member="UpdateValue", signature="ssay", body=[SERVICE, STREAM, bytes([burst_number, i])])
                 for i in range(40)]

        async def burst():
            return await asyncio.gather(*(program.bus.call(m) for m in calls))
        replies = program._run(burst(), 30)
        refused = [i for i, r in enumerate(replies) if r.error_name]
        assert all(replies[i].error_name == "org.relink.Error.UpdateQueueFull" for i in refused), \
            [r.error_name for r in replies]
        accepted += [bytes(m.body[2]) for m, r in zip(calls, replies) if not r.error_name]
        if refused:
            break
    assert refused, "no update was refused in 5 bursts: the window never filled"
    program.wait_event("ready-to-update")
    wait_until(lambda: len(c.notifications(hub.path(STREAM))) >= len(accepted), 15, "every accepted update")
    # Calls made without waiting for each reply are taken in any order (relinkd
    # runs its D-Bus handlers concurrently): each accepted value once, none refused.
    assert sorted(c.notifications(hub.path(STREAM))) == sorted(accepted), "none lost or doubled"


def test_bluetoothctl_as_the_remote_central(hub):
    """bluetoothctl, on the remote central's adapter: scan, connect, read, write, notify."""
    from benchproc import Bluetoothctl
    program = hub.program
    hub.central.forget(RELINKD_ADDRESS)  # an earlier test's central knew it: bluetoothctl must find it [NEW]
    ctl = Bluetoothctl(hub.bench, controller=pbench_address(hub))
    try:
        start = ctl.mark()
        ctl.send("scan on")
        ctl.expect(rf"\[NEW\] Device {RELINKD_ADDRESS} {LOCAL_NAME}", 15, start)
        ctl.run("scan off", r"Discovery stopped|Discovering: no")
        ctl.run(f"connect {RELINKD_ADDRESS}", r"Connection successful", 15)
        ctl.run("menu gatt", r"Menu gatt")
        ctl.run(f"select-attribute {full_uuid(STATIC)}", r"char[0-9a-f]{4}\]#")
        ctl.run("read", r"53 31\s+S1")
        ctl.run(f"select-attribute {DYNAMIC}", r"char[0-9a-f]{4}\]#")
        start = ctl.mark()
        ctl.send("read")
        ev = program.wait_event("read-request")
        program.pm("Respond", "tay", [request_of(ev), b"hi"])
        ctl.expect(r"68 69\s+hi", 10, start)
        ctl.run(f"select-attribute {COMMAND}", r"char[0-9a-f]{4}\]#")
        ctl.send('write "0x07 0x08"')
        ev = program.wait_event("write-request", after=ev[0])
        assert ev[2]["writeRequest"]["value"] == [7, 8]
        if ev[2]["writeRequest"]["request"]:
            program.pm("Respond", "tay", [request_of(ev), b""])
        ctl.run(f"select-attribute {STREAM}", r"char[0-9a-f]{4}\]#")
        ctl.run("notify on", r"Notify started")
        program.wait_event("subscribed", after=ev[0])
        start = ctl.mark()
        program.update(SERVICE, STREAM, b"ok!")
        ctl.expect(r"6f 6b 21\s+ok!", 10, start)
        ctl.run("back", r"Menu main")
        ctl.run(f"disconnect {RELINKD_ADDRESS}", r"Connected: no|Successful disconnected")
    finally:
        ctl.close()


def test_bleak_as_the_remote_central(hub):
    """bleak on the remote central's adapter: find by name, connect, read, write, notify."""
    import os
    import subprocess
    import threading

    from e2e_harness import VENV_PY, die_with_parent
    program = hub.program
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bleak_central.py")
    proc = subprocess.Popen([VENV_PY, script, hub.bench.peripherals["remote"]["adapter"], LOCAL_NAME,
                             full_uuid(STATIC), COMMAND, STREAM, "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=hub.bench.env(), text=True,
                            preexec_fn=die_with_parent)
    lines: list[dict] = []
    reader = threading.Thread(target=lambda: [lines.append(json.loads(l)) for l in proc.stdout], daemon=True)
    reader.start()

    def step(name: str) -> dict:
        return wait_until(lambda: next((l for l in lines if l["event"] in (name, "error")), None), 30,
                          f"bleak's {name} step: {lines}")
    try:
        assert step("found")["address"] == RELINKD_ADDRESS
        assert SERVICE in step("services")["services"]
        assert step("read")["value"] == b"S1".hex()
        ev = program.wait_event("write-request")
        assert ev[2]["writeRequest"]["value"] == [9]
        program.pm("Respond", "tay", [request_of(ev), b""])
        step("written")
        step("subscribed")
        program.wait_event("subscribed", after=ev[0])
        for v in (b"a", b"b", b"c"):
            program.update(SERVICE, STREAM, v)
        assert step("notified")["values"] == ["61", "62", "63"]
        assert proc.wait(20) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_two_identifiers_on_one_adapter_advertise_their_own_names_and_share_the_gap_name(hub):
    """Each identifier's advertisement carries its own localName; the GAP
    Device Name (0x2A00) a connected central reads is the adapter's one
    Alias: relinkd does not change it (docs/api/PeripheralManager1.md)."""
    other = PeripheralProgram(hub.bench.bus, "org.example.other")
    try:
        other.advertise({"localName": "Other-2", "connectable": True})
        c = hub.central
        hear_names(c, {LOCAL_NAME, "Other-2"}, "both advertised names")
        c.connect(RELINKD_ADDRESS)
        alias = c.call("/org/bluez/hci0", "org.freedesktop.DBus.Properties", "Get", "ss",
                       ["org.bluez.Adapter1", "Alias"], destination="org.bluez")[0]
        gap = c.char_path(RELINKD_ADDRESS, "1800", "2a00")
        assert c.read(gap).decode() == alias == "relink-bench central"
    finally:
        other.close()


def test_a_broadcast_advertisement_is_advertised_without_the_discoverable_flags(hub):
    """A program's advertisement with `connectable` false (BlueZ's Type
    `broadcast`) was given `Discoverable` true by default, which bluetoothd
    5.66 and 5.82 refuse whole ("Broadcast cannot set flags"; BlueZoo patch
    31 does the same; found with the bench's beacon, gateway finding G5).
    It is now advertised with no flags, and a central whose discovery has a
    filter (as every BlueZ client's does) sees it (patch 32)."""
    other = PeripheralProgram(hub.bench.bus, "org.example.broadcaster")
    try:
        other.advertise({"localName": "Bcast-3", "connectable": False})
        c = hub.central
        c.call(c.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}", [{"Transport": Variant("s", "le")}],
               destination="org.bluez")
        hear_names(hub.central, {"Bcast-3"}, "the broadcast advertisement's name")
        assert other.state().get("advertisement", {}).get("discoverable") is False, other.state()
    finally:
        other.close()
