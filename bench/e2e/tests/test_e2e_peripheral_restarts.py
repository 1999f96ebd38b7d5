"""The restart-survival suite of relinkd's peripheral role (issue 23 item 5):
each restart kind x what the remote central was doing. After each, with no
program attached: bluetoothd has relinkd's application and advertisement
again, the central finds the advertisement and the same services again
(under new object paths), reads and, subscribed again, gets the program's
notifications; a write the central had from relinkd before the restart
reaches the program once; the program that registers again gets the
restored state (services, advertisement, subscribed centrals) in its
Register reply, before any event.

A non-bonded central subscribes again after the services come back: the
attributes are new ones (Service Changed), and BlueZ keeps CCCD state only
for bonded centrals (docs/api/PeripheralManager1.md)."""

import json

import pytest

from e2e_harness import wait_until
from pbench_fixtures import (COMMAND, DYNAMIC, IDENTIFIER, LOCAL_NAME, RELINKD_ADDRESS, SERVICE, STATIC, STREAM,
                             Hub)
from remote_central import PeripheralProgram, RemoteCentral, full_uuid

RESTARTS = ("relinkd-sigkill", "relinkd-sigterm", "reboot", "bluetoothd-restart", "bluetoothd-sigterm", "power-cycle")
ROLE_EVENTS = ("read-request", "write-request", "subscribed", "unsubscribed", "ready-to-update")
# Restarts in which the link goes down while bluetoothd stays up to see it.
LINK_DROPPED_UNDER_BLUETOOTHD = ("power-cycle",)
CENTRAL_STATES = ("advertising-only", "central-connected", "central-subscribed")




def restart(hub: Hub, kind: str) -> None:
    bench, relinkd = hub.bench, hub.relinkd
    if kind == "relinkd-sigkill":
        relinkd.kill9()
        relinkd.start()
    elif kind == "relinkd-sigterm":
        assert relinkd.terminate() == 0, relinkd.log_tail()
        relinkd.start()
    elif kind == "reboot":
        # The machine goes down: relinkd and bluetoothd die; both start again on the same state.
        relinkd.kill9()
        bench.cmd("restart_bluez", signal="KILL")
        relinkd.start()
    elif kind == "bluetoothd-restart":
        bench.cmd("restart_bluez", signal="KILL")
    elif kind == "bluetoothd-sigterm":
        # bluetoothd calls Release on the advertisement and powers the adapter off as it exits (patch 17).
        bench.cmd("restart_bluez", signal="TERM")
        wait_until(lambda: "bluetoothd released the advertisement" in relinkd.log_tail(400), 10,
                   "relinkd told of the Release")
    elif kind == "power-cycle":
        bench.cmd("power_cycle_central")
    else:
        raise AssertionError(kind)


def advertisement_registered(c: RemoteCentral) -> bool:
    try:
        return c.bluez("/org/bluez/hci0", "org.freedesktop.DBus.Properties", "Get", "ss",
                       ["org.bluez.LEAdvertisingManager1", "ActiveInstances"])[0] >= 1
    except Exception:
        return False


@pytest.mark.parametrize("state", CENTRAL_STATES)
@pytest.mark.parametrize("kind", RESTARTS)
def test_the_peripheral_role_survives(hub, kind, state):
    c = hub.central
    wrote = None
    if state == "advertising-only":
        c.discover(LOCAL_NAME)
    else:
        hub.connect()
        if state == "central-subscribed":
            c.start_notify(hub.path(STREAM))
            hub.program.wait_event("subscribed")
    hub.program.ack_all()
    hub.program.leave(c)
    hub.program = None
    if state != "advertising-only":
        # Acknowledged to the central by relinkd (no program attached): it must reach the program.
        wrote = bytes([len(kind), len(state)])
        c.write(hub.path(COMMAND), wrote, with_response=True)

    restart(hub, kind)
    if kind == "power-cycle" and state != "advertising-only":
        # The central notices the link loss after its supervision timeout.
        wait_until(lambda: not c.connected(RELINKD_ADDRESS), 10, "the central noticing the power cycle")

    # bluetoothd has the advertisement again, and a central finds it in a new report.
    wait_until(lambda: advertisement_registered(c), 20, "relinkd's advertisement registered with bluetoothd again")
    if state == "advertising-only" or not c.connected(RELINKD_ADDRESS):
        if not c.connected(RELINKD_ADDRESS):
            c.forget(RELINKD_ADDRESS)
            c.discover(LOCAL_NAME)
    if state != "advertising-only":
        if not c.connected(RELINKD_ADDRESS):
            c.connect(RELINKD_ADDRESS)
        # The same services again, with relinkd answering before any program is back.
        wait_until(lambda: full_uuid(SERVICE) in c.services(RELINKD_ADDRESS), 20, "the hub's service found again")
        assert c.read(hub.path(STATIC)) == b"S1"

    # The program registers again: the restored state is in the reply, before any event.
    program = PeripheralProgram(hub.bench.bus, IDENTIFIER)
    hub.program = program
    restored = json.loads(program.restored["peripheral_manager"])
    assert [s["uuid"] for s in restored["services"]] == [SERVICE]
    assert restored["advertisement"]["localName"] == LOCAL_NAME
    # A link that bluetoothd itself saw go down clears the central's CCCD
    # (bluetoothd calls StopNotify, patch 19): the central is no longer subscribed.
    unsubscribed = state == "central-subscribed" and kind in LINK_DROPPED_UNDER_BLUETOOTHD
    want_subscribers = [{"service": SERVICE, "characteristic": STREAM, "centrals": ["unknown"]}] \
        if state == "central-subscribed" and not unsubscribed else []
    assert restored["subscribers"] == want_subscribers
    want_events = (["write-request"] if wrote is not None else []) + (["unsubscribed"] if unsubscribed else [])
    if want_events:
        program.wait_event(want_events[-1])
    if wrote is not None:
        assert program.wait_event("write-request")[2]["writeRequest"]["value"] == list(wrote)
    # (adapter-state events come too where the adapter went off and on.)
    assert [e[1] for e in program.events() if e[1] in ROLE_EVENTS] == want_events, \
        "nothing acknowledged comes again; the stored write and the unsubscription once, in order"

    if state == "advertising-only":
        c.connect(RELINKD_ADDRESS)
        wait_until(lambda: full_uuid(SERVICE) in c.services(RELINKD_ADDRESS), 20, "the hub's service")
    # A dynamic read reaches the program again.
    pending = c.read_later(hub.path(DYNAMIC))
    ev = program.wait_event("read-request")
    program.pm("Respond", "tay", [next(iter(ev[2].values()))["request"], b"back"])
    assert RemoteCentral.outcome(pending.result(15)) == b"back"
    if state == "central-subscribed":
        path = hub.path(STREAM)
        c.start_notify(path)
        before = len(c.notifications(path))
        program.update(SERVICE, STREAM, b"after")
        wait_until(lambda: c.notifications(path)[before:] == [b"after"], 15, "the update after the restart")
