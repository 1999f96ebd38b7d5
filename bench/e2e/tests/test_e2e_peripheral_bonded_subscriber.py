"""A bonded central among the peripheral role's restored subscribers
(issue 24 item 2; issue 23's note left it to issue 24).

BlueZ 5.66 (`src/gatt-database.c`, `att_disconnected`) keeps a bonded
central's CCCD state when its link goes down, however it goes, and calls
no `StopNotify` on the application; an unbonded central's is cleared
(`clear_ccc_state`, a `StopNotify`). The state lives in bluetoothd's
memory only, for the adapter's lifetime (`btd_gatt_database_new` at the
adapter's registration, `btd_gatt_database_destroy` at its removal): it
outlives a power cycle of relinkd's adapter, not a bluetoothd restart
("TODO: Persistently store CCC states before freeing them"; only the
Service Changed CCCD is stored, `device_store_svc_chng_ccc`), and not
relinkd's own restart (its services are removed with its D-Bus
connection: `gatt_db_service_removed`, `remove_device_ccc`). BlueZoo patch
29 models the same.

So across a power cycle of relinkd's adapter the bonded central stays
among the subscribers the program gets back in its restored state (no
`unsubscribed` event), and once the central reconnects the program's
updates reach it without the central subscribing again."""

import json

from e2e_harness import wait_until
from pbench_fixtures import IDENTIFIER, RELINKD_ADDRESS, SERVICE, STREAM
from remote_central import PeripheralProgram, full_uuid
from test_e2e_peripheral_restarts import ROLE_EVENTS, advertisement_registered


def test_a_bonded_subscriber_is_restored_after_a_power_cycle_and_notified_without_subscribing_again(hub):
    c = hub.central
    hub.connect()
    # The remote central bonds with relinkd's adapter (Just Works).
    c.bluez("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", "os", ["/org/example/agent", "NoInputNoOutput"])
    c.bluez(c.device_path(RELINKD_ADDRESS), "org.bluez.Device1", "Pair")
    assert c.get(c.device_path(RELINKD_ADDRESS), "org.bluez.Device1", "Bonded") is True
    path = hub.path(STREAM)
    c.start_notify(path)
    hub.program.wait_event("subscribed")
    hub.program.update(SERVICE, STREAM, b"before")
    wait_until(lambda: c.notifications(path) == [b"before"], 15, "the update before the power cycle")
    hub.program.ack_all()
    hub.program.leave(c)
    hub.program = None

    hub.bench.cmd("power_cycle_central")
    wait_until(lambda: not c.connected(RELINKD_ADDRESS), 10, "the central noticing the power cycle")
    wait_until(lambda: advertisement_registered(c), 20, "relinkd's advertisement registered again")
    c.connect(RELINKD_ADDRESS)  # not forget + discover: RemoveDevice would remove the bond
    wait_until(lambda: full_uuid(SERVICE) in c.services(RELINKD_ADDRESS), 20, "the hub's service again")

    program = PeripheralProgram(hub.bench.bus, IDENTIFIER)
    hub.program = program
    restored = json.loads(program.restored["peripheral_manager"])
    assert restored["subscribers"] == [{"service": SERVICE, "characteristic": STREAM, "centrals": ["unknown"]}], \
        "bluetoothd kept the bonded central's CCCD: still subscribed"
    # The central does not subscribe again: the program's update reaches it.
    program.update(SERVICE, STREAM, b"after")
    wait_until(lambda: c.notifications(path)[-1:] == [b"after"], 15, "the update after the power cycle")
    assert [e[1] for e in program.events() if e[1] in ROLE_EVENTS] == [], \
        "no unsubscribed (nor subscribed) event: the subscription never ended"
