"""The broadcast-only beacon (issue 22 item 3) and BlueZoo patches 14, 15,
31 and 32, observed directly on org.bluez (dbus-fast client): the beacon's
iBeacon frame, service data, TX power and appearance reach Device1; a
changed frame is signalled; its advertisement is non-connectable, so
Connect fails as on real BlueZ. A broadcaster sets no discoverable flags,
so bluetoothd reports it only to a discovery with a filter (as every
client here sets, `Transport` le), and refuses a broadcast advertisement
that asks to be discoverable."""

import asyncio
import time
import struct
import uuid

import pytest

from dbus_fast import Variant

from busclient import BusError, Client
from benchproc import BenchProcess

DEV = "org.bluez.Device1"
EDDYSTONE = "0000feaa-0000-1000-8000-00805f9b34fb"
LE = {"Transport": Variant("s", "le")}


@pytest.fixture(scope="module")
def bench():
    b = BenchProcess("--lock", "lock", "--beacon", "beacon")
    yield b
    b.stop()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


def ibeacon(frame: bytes) -> tuple[uuid.UUID, int, int, int]:
    assert frame[:2] == b"\x02\x15" and len(frame) == 23, frame.hex()
    major, minor, power = struct.unpack(">HHb", frame[18:23])
    return uuid.UUID(bytes=frame[2:18]), major, minor, power


def test_the_beacons_advertising_data_is_on_device1_and_a_change_is_signalled(bench):
    async def go():
        async with Client(bench.bus) as c:
            beacon = bench.path("beacon")
            await c.start_discovery(LE)
            await c.wait_device(beacon)
            props = (await c.objects())[beacon][DEV]
            md = {k: bytes(v.value) for k, v in props["ManufacturerData"].items()}
            assert list(md) == [0x004C]
            state = bench.cmd("get", peripheral="beacon")
            assert ibeacon(md[0x004C]) == (uuid.UUID(state["proximity_uuid"]), state["major"], state["minor"], state["power"])
            assert {k: bytes(v.value) for k, v in props["ServiceData"].items()} == {EDDYSTONE: bytes.fromhex(state["service_data"][EDDYSTONE])}
            assert props["TxPower"] == -8 and props["Appearance"] == 0x0200
            bench.cmd("set_beacon", peripheral="beacon", minor=state["minor"] + 1)

            async def changed():
                while True:
                    now = {k: bytes(v.value) for k, v in (await c.get(beacon, DEV, "ManufacturerData")).items()}
                    if ibeacon(now[0x004C])[2] == state["minor"] + 1:
                        return
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(changed(), 10)
            await c.stop_discovery()
    run(go())


def test_a_broadcast_only_beacon_cannot_be_connected(bench):
    async def go():
        async with Client(bench.bus) as c:
            beacon = bench.path("beacon")
            await c.start_discovery(LE)
            await c.wait_device(beacon)
            await c.stop_discovery()
            with pytest.raises(BusError) as e:
                await c.connect(beacon)
            assert e.value.name == "org.bluez.Error.Failed"
            assert e.value.text == "le-connection-abort-by-local"
            assert await c.get(beacon, DEV, "Connected") is False
    run(go())


def test_one_report_is_one_properties_changed(bench):
    """Patch 15: a report that changes manufacturer and service data (and
    perhaps the RSSI) is one PropertiesChanged carrying all of them, as
    bluetoothd's GDBus gathers an object's changes; never one per property."""
    async def go():
        async with Client(bench.bus) as c:
            beacon = bench.path("beacon")
            await c.start_discovery(LE)
            await c.wait_device(beacon)
            minor = bench.cmd("get", peripheral="beacon")["minor"] + 1
            t = time.monotonic()
            bench.cmd("set_beacon", peripheral="beacon", minor=minor)
            await c.wait_change(beacon, "ServiceData", since=t)
            await c.stop_discovery()
            signals = [changed for at, path, iface, changed in c.changes
                       if at >= t and path == beacon and iface == DEV and ("ManufacturerData" in changed or "ServiceData" in changed)]
            assert signals and "ManufacturerData" in signals[0] and "ServiceData" in signals[0], signals
    run(go())


def test_a_broadcaster_has_no_flags_and_only_a_filtered_discovery_reports_it(fresh_bench):
    """Patch 32: bluetoothd creates a Device1 for a report without the
    discoverable flags only while a discovery client has a filter
    (adapter.c, device_is_discoverable); the lock (discoverable) is found
    either way, and the beacon's Device1 has no AdvertisingFlags."""
    bench = fresh_bench("--lock", "lock", "--beacon", "beacon")  # no Device1 of an earlier test

    async def go():
        async with Client(bench.bus) as c:
            beacon, lock = bench.path("beacon"), bench.path("lock")
            await c.start_discovery()
            await c.wait_device(lock)
            assert beacon not in await c.objects(), "an unfiltered discovery reported a broadcaster without flags"
            await c.stop_discovery()
            await c.start_discovery(LE)
            await c.wait_device(beacon)
            await c.stop_discovery()
            assert not (await c.objects())[beacon][DEV].get("AdvertisingFlags"), "a broadcaster sets no flags"
    run(go())


def test_a_broadcast_advertisement_that_asks_to_be_discoverable_is_refused(bench):
    """Patch 31: bluetoothd 5.66 to 5.8x refuse it whole ("Broadcast cannot
    set flags": `Failed` "Failed to parse advertisement."), and nothing is
    advertised; BlueZoo 1.0.2 advertised it."""
    from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property, method

    class Broadcast(ServiceInterface):
        def __init__(self, discoverable: bool):
            super().__init__("org.bluez.LEAdvertisement1")
            self.discoverable = discoverable

        @method()
        def Release(self):
            pass

        @dbus_property(access=PropertyAccess.READ)
        def Type(self) -> "s":  # noqa: F821 (D-Bus signature)
            return "broadcast"

        @dbus_property(access=PropertyAccess.READ)
        def Discoverable(self) -> "b":  # noqa: F821 (D-Bus signature)
            return self.discoverable

    manager = "org.bluez.LEAdvertisingManager1"

    async def go():
        async with Client(bench.bus) as c:
            c.bus.export("/test/discoverable", Broadcast(True))
            c.bus.export("/test/plain", Broadcast(False))
            before = await c.get("/org/bluez/hci0", manager, "ActiveInstances")
            with pytest.raises(BusError) as refused:
                await c.call("RegisterAdvertisement", "oa{sv}", ["/test/discoverable", {}], path="/org/bluez/hci0", iface=manager)
            assert refused.value.name == "org.bluez.Error.Failed", refused.value
            assert await c.get("/org/bluez/hci0", manager, "ActiveInstances") == before
            await c.call("RegisterAdvertisement", "oa{sv}", ["/test/plain", {}], path="/org/bluez/hci0", iface=manager)
            assert await c.get("/org/bluez/hci0", manager, "ActiveInstances") == before + 1
            await c.call("UnregisterAdvertisement", "o", ["/test/plain"], path="/org/bluez/hci0", iface=manager)
    run(go())
