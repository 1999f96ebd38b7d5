"""The controller's advertising instances (issue 23): with relinkd's adapter
sending one advertisement at once (bench patch 24), a second identifier's
StartAdvertising gets AdvertisingLimitReached and nothing published changes;
after a restart the advertisement that does not fit is kept and shown as
waiting, its services registered, and it starts once the other stops."""

import json
import os
import subprocess

import pytest

from e2e_harness import RELINKD, DBusCallError, wait_until
from pbench_fixtures import IDENTIFIER, LOCAL_NAME, RELINKD_ADDRESS
from remote_central import PeripheralProgram, full_uuid

SECOND = "org.example.second"            # after IDENTIFIER in identifier order
SECOND_NAME = "Second-1"
SECOND_SERVICE = {"uuid": "180a", "characteristics": [
    {"uuid": "2a29", "properties": ["read"], "permissions": ["readable"], "value": list(b"A")}]}
SECOND_AD = {"localName": SECOND_NAME, "serviceUUIDs": ["180a"]}
ADAPTER = "/org/bluez/hci0"
RELINKCTL = os.path.join(os.path.dirname(RELINKD), "relinkctl")


def relinkctl(hub, *args: str) -> str:
    return subprocess.run([RELINKCTL, "--bus-address", hub.bench.bus, *args], check=True, capture_output=True,
                          text=True, timeout=30).stdout


def active_instances(hub) -> int:
    return int(hub.central.get(ADAPTER, "org.bluez.LEAdvertisingManager1", "ActiveInstances"))


@pytest.fixture
def limited(hub):
    """relinkd's adapter with one advertising instance; 15 again afterwards."""
    hub.bench.cmd("set_advertising_instances", instances=1)
    second = PeripheralProgram(hub.bench.bus, SECOND)
    second.publish(SECOND_SERVICE)
    try:
        yield hub, second
    finally:
        second.close()
        hub.bench.cmd("set_advertising_instances", instances=15)


def test_start_advertising_past_the_limit_is_a_typed_error_and_nothing_changes(limited):
    hub, second = limited
    with pytest.raises(DBusCallError) as e:
        second.advertise(SECOND_AD)
    assert e.value.name == "org.relink.Error.AdvertisingLimitReached", e.value
    assert "advertising instance" in e.value.text
    assert "advertisement" not in second.state()
    assert active_instances(hub) == 1
    # The first identifier still advertises and serves; the second's services are registered.
    assert hub.central.discover(LOCAL_NAME)["Address"] == RELINKD_ADDRESS


@pytest.mark.parametrize("restart", ["relinkd-kill", "bluetoothd-kill"])
def test_a_restored_advertisement_that_does_not_fit_waits_and_starts_when_another_stops(limited, restart):
    hub, second = limited
    hub.bench.cmd("set_advertising_instances", instances=2)
    second.advertise(SECOND_AD)
    hub.bench.cmd("set_advertising_instances", instances=1)
    if restart == "relinkd-kill":
        hub.relinkd.kill9()
        hub.relinkd.start()
    else:
        hub.bench.cmd("restart_bluez")

    # Identifier order: the hub takes the one instance, the second waits, kept.
    def waiting():
        try:
            return second.state().get("advertisementWaiting") is True
        except DBusCallError:
            return False    # relinkd not back on the bus yet
    wait_until(waiting, 30, "the second advertisement shown as waiting")
    assert second.state()["advertisement"]["localName"] == SECOND_NAME
    assert f"Advertising: {SECOND_NAME}, waiting for an advertising instance" in relinkctl(hub, "show", SECOND)
    assert json.loads(relinkctl(hub, "--json", "show", SECOND))["advertising"] == {"localName": SECOND_NAME, "waiting": True}
    assert "Advertising: waiting for an advertising instance" in relinkctl(hub, "peripheral-role", SECOND)
    hub.program.register()
    # The hub's advertisement is registered (bounded wait: after a bluetoothd
    # restart relinkd may register it a second time when the adapter's
    # power-on is reported, which bluetoothd answers AlreadyExists; the
    # bench answered NotPermitted until patch 30 and the hub was then shown
    # waiting, seen once in a CI-like run).
    wait_until(lambda: "advertisementWaiting" not in hub.program.state(), 30, "the hub's advertisement registered")
    assert f"Advertising: {LOCAL_NAME}\n" in relinkctl(hub, "show", IDENTIFIER)
    wait_until(lambda: active_instances(hub) == 1, 30, "one advertisement registered")

    # The hub stops advertising: the second's advertisement starts.
    hub.program.pm("StopAdvertising")
    wait_until(lambda: "advertisementWaiting" not in second.state(), 30, "the second advertisement started")
    found = hub.central.discover(SECOND_NAME, timeout=30)
    assert full_uuid("180a") in found.get("UUIDs", []), found
