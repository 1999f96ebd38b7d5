"""The BlueZoo patches, observed directly on org.bluez (dbus-fast client)."""

import asyncio
import struct
import time

import pytest
from dbus_fast import Variant

from busclient import BusError, Client

LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
GAP = "00001800-0000-1000-8000-00805f9b34fb"
DEV = "org.bluez.Device1"
CHR = "org.bluez.GattCharacteristic1"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


async def found(c: Client, bench, *names) -> None:
    await c.start_discovery()
    for n in names:
        await c.wait_device(bench.path(n))
    await c.stop_discovery()


async def linked(c: Client, bench, name: str) -> str:
    """Finds and connects a peripheral; returns its device path."""
    device = bench.path(name)
    await found(c, bench, name)
    await c.connect(device)
    return device


async def subscribed(c: Client, bench, name: str, characteristic: str) -> tuple[str, str]:
    """Finds and connects a peripheral and starts a notify session on one
    of its characteristics; returns the device's and the characteristic's paths."""
    device = bench.path(name)
    await found(c, bench, name)
    await c.connect(device)
    path = await c.char_path(device, characteristic)
    await c.call("StartNotify", path=path, iface=CHR)
    return device, path


def test_reconnect_after_disconnect_keeps_gatt_objects(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            await c.connect(lock)
            state = await c.char_path(lock, LOCK_STATE)
            assert await c.get(lock, DEV, "ServicesResolved") is True
            t = time.monotonic()
            await c.disconnect(lock)
            await c.wait_change(lock, "ServicesResolved", False, t)
            await c.wait_change(lock, "Connected", False, t)
            assert await c.get(lock, DEV, "Connected") is False
            # BlueZ keeps the GATT objects (cache); reads fail while disconnected.
            assert state in await c.objects()
            with pytest.raises(BusError) as e:
                await c.call("ReadValue", "a{sv}", [{}], path=state, iface=CHR)
            assert e.value.name == "org.bluez.Error.Failed"
            # BlueZ 5.66 and later: Disconnect() of a disconnected device
            # succeeds (src/device.c device_request_disconnect).
            await c.disconnect(lock)
            for _ in range(3):
                await c.connect(lock)
                assert await c.get(lock, DEV, "Connected") is True
                value = await c.call("ReadValue", "a{sv}", [{}], path=state, iface=CHR)
                assert bytes(value[0]) in (b"locked", b"unlocked")
                await c.disconnect(lock)
            assert [p for _, p in c.removed if p.startswith(lock + "/")] == []
    run(go())


def test_out_of_range_connect_fails_after_connect_timeout_then_back(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            bench.cmd("out_of_range", peripheral="lock")
            t0 = time.monotonic()
            with pytest.raises(BusError) as e:
                await c.connect(lock)
            took = time.monotonic() - t0
            assert e.value.name == "org.bluez.Error.Failed"
            assert e.value.text == "le-connection-abort-by-local"
            assert 0.9 <= took < 4.0, took
            bench.cmd("in_range", peripheral="lock")
            await c.connect(lock)
            assert await c.get(lock, DEV, "Connected") is True
            await c.disconnect(lock)
    run(go())


def test_connect_pending_completes_when_peer_comes_back(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            bench.cmd("set_timing", connect_timeout=5.0, supervision_timeout=0.5)
            try:
                bench.cmd("out_of_range", peripheral="lock")
                pending = asyncio.ensure_future(c.connect(lock))
                await asyncio.sleep(0.5)
                assert not pending.done()
                # A second Connect while one is pending: InProgress.
                with pytest.raises(BusError) as e:
                    await c.connect(lock)
                assert e.value.name == "org.bluez.Error.InProgress"
                bench.cmd("in_range", peripheral="lock")
                await pending
                assert await c.get(lock, DEV, "Connected") is True
                await c.disconnect(lock)
                # Disconnect while Connect is pending cancels it.
                bench.cmd("out_of_range", peripheral="lock")
                pending = asyncio.ensure_future(c.connect(lock))
                await asyncio.sleep(0.3)
                await c.disconnect(lock)
                with pytest.raises(BusError) as e:
                    await pending
                assert (e.value.name, e.value.text) == ("org.bluez.Error.Failed",
                                                        "br-connection-canceled")
            finally:
                bench.cmd("in_range", peripheral="lock")
                bench.cmd("set_timing", connect_timeout=1.0, supervision_timeout=0.5)
    run(go())


def test_out_of_range_drops_link_and_notifications_stop(bench):
    async def go():
        async with Client(bench.bus) as c:
            band, hrm = await subscribed(c, bench, "band", HR_MEASUREMENT)
            t = time.monotonic()
            await asyncio.sleep(1.2)
            assert len(c.values(hrm, "Value", t)) >= 2
            t = time.monotonic()
            bench.cmd("out_of_range", peripheral="band")
            await c.wait_change(band, "Connected", False, t, timeout=5)
            dropped = time.monotonic()
            assert await c.get(band, DEV, "ServicesResolved") is False
            assert await c.get(hrm, CHR, "Notifying") is False
            await asyncio.sleep(1.0)
            # Nothing arrives once the peer is gone (band streams at 2/s).
            assert c.values(hrm, "Value", t + 0.05) == []
            bench.cmd("in_range", peripheral="band")
            await c.connect(band)
            # Our notify session is re-armed on reconnection (we stayed on the bus).
            t = time.monotonic()
            await c.wait_change(hrm, "Notifying", True, dropped)
            await c.wait_change(hrm, "Value", None, t)
            await c.disconnect(band)
    run(go())


def test_peripheral_exit_keeps_the_link_and_its_services_come_back_under_new_paths(bench):
    """Real bluetoothd 5.66 (docs/real-bluez.md difference 8): the peripheral
    program killed on a live link leaves the link up; its services' GATT
    objects are removed, and added again under new paths when it registers
    again. (Patch 3 used to drop the link.)"""
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            await c.connect(lock)
            old = await c.char_path(lock, LOCK_STATE)
            bench.cmd("kill_peripheral", peripheral="lock")

            async def gone():
                return old not in await c.objects()
            await c.wait_for(gone, 5, "the lock's GATT objects removed")
            assert await c.get(lock, DEV, "Connected") is True
            bench.cmd("start_peripheral", peripheral="lock")

            async def back():
                paths = [p for p, i in (await c.objects()).items() if p.startswith(lock + "/")
                         and i.get(CHR, {}).get("UUID") == LOCK_STATE]
                return paths[0] if paths else None
            new = await c.wait_for(back, 5, "the lock's characteristic again")
            assert new != old
            assert await c.get(lock, DEV, "Connected") is True
            assert bytes((await c.call("ReadValue", "a{sv}", [{}], path=new, iface=CHR))[0]) \
                in (b"locked", b"unlocked")
            await c.disconnect(lock)
    run(go())


def test_gap_name_after_connect_and_advertised_name_while_discovering(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await c.start_discovery()
            await c.wait_device(lock)

            async def advertised_name():
                return await c.get(lock, DEV, "Name") == "RLK-7F3A"
            await c.wait_for(advertised_name, 5, "the advertised name")
            await c.stop_discovery()
            t = time.monotonic()
            await c.connect(lock)
            assert await c.wait_change(lock, "Name", "Front Door", t) == "Front Door"
            objs = await c.objects()
            gap = [p for p, i in objs.items() if p.startswith(lock + "/")
                   and i.get("org.bluez.GattService1", {}).get("UUID") == GAP]
            assert gap, "0x1800 is exported (BlueZ >= 5.80 default)"
            uuids = await c.get(lock, DEV, "UUIDs")
            assert LOCK_SERVICE in uuids and GAP in uuids
            await c.disconnect(lock)
            # Advertising again: the advertised name wins once more.
            t = time.monotonic()
            await c.start_discovery()
            await c.wait_change(lock, "Name", "RLK-7F3A", t)
            await c.stop_discovery()
    run(go())


def test_gap_service_hidden_like_bluez_566(fresh_bench):
    bench = fresh_bench("--gap-service", "hidden", "--lock", "lock")

    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            t = time.monotonic()
            await c.connect(lock)
            await c.wait_change(lock, "Name", "Front Door", t)
            objs = await c.objects()
            uuids = [i["org.bluez.GattService1"]["UUID"] for p, i in objs.items()
                     if p.startswith(lock + "/") and "org.bluez.GattService1" in i]
            assert GAP not in uuids and LOCK_SERVICE in uuids
    run(go())


class _GattService:
    """A primary GattService1 (UUID only), exported on a client's bus."""

    def __new__(cls, uuid: str):
        from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property

        class Service(ServiceInterface):
            def __init__(self):
                super().__init__("org.bluez.GattService1")

            @dbus_property(access=PropertyAccess.READ)
            def UUID(self) -> "s":  # noqa: F821 (D-Bus signature)
                return uuid

            @dbus_property(access=PropertyAccess.READ)
            def Primary(self) -> "b":  # noqa: F821 (D-Bus signature)
                return True

        return Service()


def test_an_application_exporting_gap_is_refused_like_bluez_566(bench):
    """bluetoothd serves 0x1800 and 0x1801 itself: RegisterApplication of an
    application exporting either fails (src/gatt-database.c parse_uuid,
    "GAP service must be handled by BlueZ"); the same client registers an
    application without them. The peripherals' GAP name is their adapter's
    Alias."""
    async def go():
        async with Client(bench.bus) as c:
            lock_adapter = "/org/bluez/" + bench.info["peripherals"]["lock"]["adapter"]
            for n, uuid in enumerate((GAP, "00001801-0000-1000-8000-00805f9b34fb")):
                app = f"/test/gap{n}"
                c.bus.export(f"{app}/service0", _GattService(uuid))
                with pytest.raises(BusError) as e:
                    await c.call("RegisterApplication", "oa{sv}", [app, {}], path=lock_adapter,
                                 iface="org.bluez.GattManager1")
                assert (e.value.name, e.value.text) == (
                    "org.bluez.Error.Failed", "Failed to create entry in database")
            c.bus.export("/test/ok/service0", _GattService(HEART_RATE))
            await c.call("RegisterApplication", "oa{sv}", ["/test/ok", {}], path=lock_adapter,
                         iface="org.bluez.GattManager1")
            assert await c.get(lock_adapter, "org.bluez.Adapter1", "Alias") == "Front Door"
            await c.call("UnregisterApplication", "o", ["/test/ok"], path=lock_adapter,
                         iface="org.bluez.GattManager1")
    run(go())


def test_rssi_varies_and_is_signalled(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            await c.start_discovery()
            t = time.monotonic()
            bench.cmd("set_rssi", peripheral="lock", rssi=-40, noise=0)
            assert await c.wait_change(lock, "RSSI", -40, t) == -40
            await c.stop_discovery()
            # With an RSSI filter every report is signalled (noise 4 dBm).
            bench.cmd("set_rssi", peripheral="lock", rssi=-50, noise=4)
            t = time.monotonic()
            await c.start_discovery({"RSSI": Variant("n", -90)})
            await asyncio.sleep(2.0)
            await c.stop_discovery()
            await c.call("SetDiscoveryFilter", "a{sv}", [{}], path="/org/bluez/hci0",
                         iface="org.bluez.Adapter1")
            values = c.values(lock, "RSSI", t)
            assert len(values) >= 3, values
            assert all(-54 <= v <= -46 for v in values), values
            assert len(set(values)) >= 2, values
            # DuplicateData makes a filtered discovery too: every report is
            # signalled with no RSSI threshold (which would drop reports of
            # controllers without an RSSI, as btvirt's; issue 20 finding 6).
            t = time.monotonic()
            await c.start_discovery({"DuplicateData": Variant("b", True)})
            deadline = time.monotonic() + 10
            while len(c.values(lock, "RSSI", t)) < 4 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await c.stop_discovery()
            await c.call("SetDiscoveryFilter", "a{sv}", [{}], path="/org/bluez/hci0",
                         iface="org.bluez.Adapter1")
            assert len(c.values(lock, "RSSI", t)) >= 4, c.values(lock, "RSSI", t)
    run(go())


def test_rename_is_seen_while_discovering(bench):
    async def go():
        async with Client(bench.bus) as c:
            band = bench.path("band")
            await found(c, bench, "band")
            await c.start_discovery()
            t = time.monotonic()
            bench.cmd("set_adv_name", peripheral="band", name="HRM-RENAMED")
            await c.wait_change(band, "Name", "HRM-RENAMED", t)
            await c.wait_change(band, "Alias", "HRM-RENAMED", t)
            bench.cmd("set_adv_name", peripheral="band", name="HRM-2C41")
            await c.wait_change(band, "Name", "HRM-2C41", t)
            await c.stop_discovery()
    run(go())


def test_discovery_filters_are_applied_and_checked(fresh_bench):
    bench = fresh_bench()

    async def go():
        async with Client(bench.bus) as c:
            hci0 = "/org/bluez/hci0"
            for bad in ({"Bogus": Variant("b", True)},
                        {"RSSI": Variant("s", "-50")},
                        {"RSSI": Variant("n", -50), "Pathloss": Variant("q", 10)},
                        {"Transport": Variant("s", "radio")}):
                with pytest.raises(BusError) as e:
                    await c.call("SetDiscoveryFilter", "a{sv}", [bad], path=hci0,
                                 iface="org.bluez.Adapter1")
                assert e.value.name == "org.bluez.Error.InvalidArguments", bad
            # Pattern: prefix of name or address.
            await c.start_discovery({"Pattern": Variant("s", "HRM")})
            await c.wait_device(bench.path("band"))
            await asyncio.sleep(0.8)
            assert bench.path("lock") not in await c.objects()
            with pytest.raises(BusError) as e:
                await c.start_discovery()
            assert e.value.name == "org.bluez.Error.InProgress"
            await c.stop_discovery()
            with pytest.raises(BusError) as e:
                await c.stop_discovery()
            assert e.value.name == "org.bluez.Error.Failed"
            # RSSI threshold: the lock is near, the band far.
            bench.cmd("set_rssi", peripheral="lock", rssi=-40, noise=0)
            bench.cmd("set_rssi", peripheral="band", rssi=-90, noise=0)
            await c.call("RemoveDevice", "o", [bench.path("band")], path=hci0,
                         iface="org.bluez.Adapter1")
            await c.start_discovery({"RSSI": Variant("n", -60)})
            await c.wait_device(bench.path("lock"))
            await asyncio.sleep(0.8)
            assert bench.path("band") not in await c.objects()
            await c.stop_discovery()
            # UUIDs: only the matching peripheral.
            await c.call("RemoveDevice", "o", [bench.path("lock")], path=hci0,
                         iface="org.bluez.Adapter1")
            await c.start_discovery({"UUIDs": Variant("as", [LOCK_SERVICE])})
            await c.wait_device(bench.path("lock"))
            await asyncio.sleep(0.8)
            assert bench.path("band") not in await c.objects()
            await c.stop_discovery()
    run(go())


def test_advertising_data_on_device(bench):
    async def go():
        async with Client(bench.bus) as c:
            await found(c, bench, "lock", "band")
            objs = await c.objects()
            lock = objs[bench.path("lock")][DEV]
            band = objs[bench.path("band")][DEV]
            assert {k: bytes(v.value) for k, v in lock["ManufacturerData"].items()} \
                == {0xFFFF: b"RL\x01"}
            assert LOCK_SERVICE in lock["UUIDs"] and HEART_RATE in band["UUIDs"]
            assert {k: bytes(v.value) for k, v in band["ServiceData"].items()} \
                == {HEART_RATE: b"\x01"}
            assert bytes(lock["AdvertisingFlags"]) == b"\x06"
            assert lock["Address"] == bench.address("lock")
    run(go())


def test_band_notifications_are_neither_lost_nor_doubled(bench):
    async def go():
        async with Client(bench.bus) as c:
            band = bench.path("band")
            await found(c, bench, "band")
            await c.connect(band)
            hrm = await c.char_path(band, HR_MEASUREMENT)
            bench.cmd("set_rate", peripheral="band", rate=50)
            await c.call("StartNotify", path=hrm, iface=CHR)
            t = time.monotonic()
            await asyncio.sleep(2.0)
            await c.call("StopNotify", path=hrm, iface=CHR)
            bench.cmd("set_rate", peripheral="band", rate=2)
            counters = [struct.unpack("<BBI", bytes(v)[:6])[2] for v in c.values(hrm, "Value", t)]
            assert len(counters) >= 20, len(counters)
            assert counters == list(range(counters[0], counters[0] + len(counters)))
            await c.disconnect(band)
    run(go())


def test_power_cycle_central_drops_links_and_discovery(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            await c.connect(lock)
            await c.start_discovery()
            t = time.monotonic()
            bench.cmd("power_cycle_central", off_seconds=0.3)
            await c.wait_change(lock, "Connected", False, t)
            await c.wait_change("/org/bluez/hci0", "Discovering", False, t)
            assert await c.get("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") is True
            # Sessions were freed: StopDiscovery now fails, StartDiscovery works.
            with pytest.raises(BusError):
                await c.stop_discovery()
            await c.start_discovery()
            await c.stop_discovery()
            await c.connect(lock)
            await c.disconnect(lock)
    run(go())


def test_bluez_restart_peripherals_register_again(bench):
    async def go():
        before = bench.cmd("status")["state"]
        reply = bench.cmd("restart_bluez")
        assert reply["pid"] != reply["old_pid"]
        after = bench.cmd("status")["state"]
        for name in ("lock", "band"):
            assert after[name]["registrations"] == before[name]["registrations"] + 1
        async with Client(bench.bus) as c:
            assert bench.path("lock") not in await c.objects()   # a fresh bluetoothd knows nothing
            lock, state = await subscribed(c, bench, "lock", LOCK_STATE)
            t = time.monotonic()
            bench.cmd("push", peripheral="lock", state="unlocked")
            assert bytes(await c.wait_change(state, "Value", None, t)) == b"unlocked"
            await c.disconnect(lock)
    run(go())


def test_trusted_outlives_a_bluez_restart_until_remove_device(bench):
    """Patch 28: BlueZ stores Trusted with the device and loads it at start;
    RemoveDevice deletes it."""
    async def go():
        lock = bench.path("lock")
        async with Client(bench.bus) as c:
            await linked(c, bench, "lock")
            await c.set(lock, DEV, "Trusted", "b", True)
            await c.disconnect(lock)
        bench.cmd("restart_bluez")
        async with Client(bench.bus) as c:
            await found(c, bench, "lock")
            assert await c.get(lock, DEV, "Trusted") is True, "Trusted forgotten by the restart"
            await c.call("RemoveDevice", "o", [lock], path="/org/bluez/hci0", iface="org.bluez.Adapter1")
            await found(c, bench, "lock")
            assert await c.get(lock, DEV, "Trusted") is False, "RemoveDevice kept Trusted"
    run(go())


def test_bluez_restart_keeps_an_out_of_range_peripheral_powered_off(bench):
    """Issue 20 finding 9: on a restart the mock's adapters came up powered
    and the bench powered the out-of-range ones off only afterwards, so a
    scanning relinkd could briefly find and connect a device that is away.
    Now they come up as the world has them: never powered on at all."""
    async def go():
        adapter = "/org/bluez/" + bench.peripherals["lock"]["adapter"]
        bench.cmd("out_of_range", peripheral="lock")
        try:
            async with Client(bench.bus) as c:
                t = time.monotonic()
                bench.cmd("restart_bluez")
                # A call's reply comes after every signal the new bluetoothd sent before it.
                assert await c.get(adapter, "org.bluez.Adapter1", "Powered") is False
                added = [props for ts, p, props in c.added_props if p == adapter and ts >= t]
                assert all(props["org.bluez.Adapter1"]["Powered"] is False for props in added), added
                assert True not in c.values(adapter, "Powered", t)
                assert await c.get(adapter, "org.bluez.Adapter1", "Powered") is False
                assert await c.get("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") is True
        finally:
            bench.cmd("in_range", peripheral="lock")
    run(go())


def test_bluez_restart_by_sigterm_and_advertising_control(bench):
    """restart_bluez signal=TERM stops BlueZoo gracefully (the real-BlueZ
    backend plays both kinds); set_advertising takes a peripheral off the
    air and back without touching its adapter."""
    async def go():
        with pytest.raises(RuntimeError, match="signal must be KILL or TERM"):
            bench.cmd("restart_bluez", signal="HUP")
        reply = bench.cmd("restart_bluez", signal="TERM")
        assert reply["signal"] == "TERM" and reply["pid"] != reply["old_pid"]
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            assert bench.cmd("set_advertising", peripheral="lock", on=False)["advertising"] is False
            assert bench.cmd("get", peripheral="lock")["adv_registered"] is False
            await c.start_discovery()
            await c.wait_device(bench.path("band"))
            await asyncio.sleep(0.5)    # several scan intervals (0.2 s)
            assert lock not in await c.objects(), "a peripheral that does not advertise is not found"
            bench.cmd("set_advertising", peripheral="lock", on=True)
            await c.wait_device(lock)
            await c.stop_discovery()
    run(go())


def test_start_notify_while_disconnected_is_armed_at_next_connection(bench):
    async def go():
        async with Client(bench.bus) as c:
            band = bench.path("band")
            await found(c, bench, "band")
            await c.connect(band)
            hrm = await c.char_path(band, HR_MEASUREMENT)
            await c.disconnect(band)
            await c.call("StartNotify", path=hrm, iface=CHR)
            await c.call("StartNotify", path=hrm, iface=CHR)   # again: still fine
            assert await c.get(hrm, CHR, "Notifying") is False
            t = time.monotonic()
            await c.connect(band)
            await c.wait_change(hrm, "Notifying", True, t)
            await c.wait_change(hrm, "Value", None, t)
            await c.call("StopNotify", path=hrm, iface=CHR)
            with pytest.raises(BusError) as e:
                await c.call("StopNotify", path=hrm, iface=CHR)
            assert e.value.name == "org.bluez.Error.Failed"
            await c.disconnect(band)
    run(go())


def test_user_alias_survives_name_changes(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            await c.set(lock, DEV, "Alias", "s", "My Lock")
            await c.connect(lock)
            await c.wait_for(lambda: _name_is(c, lock, "Front Door"), 5, "GAP name")
            assert await c.get(lock, DEV, "Alias") == "My Lock"
            await c.set(lock, DEV, "Alias", "s", "")
            assert await c.get(lock, DEV, "Alias") == "Front Door"
            await c.disconnect(lock)
    run(go())


async def _name_is(c: Client, path: str, name: str) -> bool:
    return await c.get(path, DEV, "Name") == name


def test_gap_name_change_is_read_at_next_connection(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await found(c, bench, "lock")
            bench.cmd("set_gap_name", peripheral="lock", name="Side Door")
            try:
                t = time.monotonic()
                await c.connect(lock)
                assert await c.wait_change(lock, "Name", "Side Door", t) == "Side Door"
                await c.disconnect(lock)
            finally:
                bench.cmd("set_gap_name", peripheral="lock", name="Front Door")
    run(go())


def test_band_streaming_stops_and_starts(bench):
    async def go():
        async with Client(bench.bus) as c:
            band, hrm = await subscribed(c, bench, "band", HR_MEASUREMENT)
            bench.cmd("stop_stream", peripheral="band")
            await asyncio.sleep(0.3)
            t = time.monotonic()
            await asyncio.sleep(1.2)
            assert c.values(hrm, "Value", t) == []
            bench.cmd("push", peripheral="band")
            await c.wait_change(hrm, "Value", None, t)
            t = time.monotonic()
            bench.cmd("start_stream", peripheral="band", rate=10)
            await asyncio.sleep(1.0)
            assert len(c.values(hrm, "Value", t)) >= 4
            bench.cmd("set_rate", peripheral="band", rate=2)
            bad = bench.try_cmd("set_rate", peripheral="band", rate=0)
            assert not bad["ok"] and "rate" in bad["error"]
            bad = bench.try_cmd("start_stream", peripheral="lock")
            assert not bad["ok"]
            await c.disconnect(band)
    run(go())


def test_temporary_devices_expire_unless_connected(fresh_bench):
    bench = fresh_bench("--temporary-timeout", "1", "--lock", "lock", "--band", "band")

    async def go():
        async with Client(bench.bus) as c:
            lock, band = bench.path("lock"), bench.path("band")
            await found(c, bench, "lock", "band")
            await c.connect(lock)          # a connection makes it permanent
            await c.disconnect(lock)
            t = time.monotonic()
            await c.wait_for(lambda: _gone(c, band), 5, "the band to expire")
            assert time.monotonic() - t >= 0.5
            assert lock in await c.objects()
            # Found again by a new discovery.
            await found(c, bench, "band")
    run(go())


async def _gone(c: Client, path: str) -> bool:
    return path not in await c.objects()


class _Profile:
    """A GattProfile1 object (UUIDs only), exported on a client's bus."""

    def __new__(cls, uuids: list[str]):
        from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property

        class Profile(ServiceInterface):
            def __init__(self):
                super().__init__("org.bluez.GattProfile1")
                self.uuids = uuids

            @dbus_property(access=PropertyAccess.READ)
            def UUIDs(self) -> "as":  # noqa: F821 (D-Bus signature)
                return self.uuids

        return Profile()


async def register_profile(c: Client, app: str, uuids: list[str]) -> None:
    c.bus.export(f"{app}/profile0", _Profile(uuids))
    await c.call("RegisterApplication", "oa{sv}", [app, {}], path="/org/bluez/hci0",
                 iface="org.bluez.GattManager1")


def test_background_auto_connect_through_a_gatt_profile(bench):
    """BlueZ: a GattProfile1 in a registered application puts known devices
    offering its UUIDs on the kernel's auto-connect list; Disconnect() turns
    that off until the next Connect(); the UUIDs are read once."""
    async def go():
        async with Client(bench.bus) as c:
            lock, band = bench.path("lock"), bench.path("band")
            await found(c, bench, "lock", "band")
            for dev in (lock, band):  # known, not temporary
                await c.connect(dev)
                await c.disconnect(dev)
            t = time.monotonic()
            await register_profile(c, "/test/app", [LOCK_SERVICE])
            # Registering probes the known devices: the lock (advertising,
            # disconnected) is connected with no Connect() call.
            await c.wait_change(lock, "ServicesResolved", True, t, timeout=5)
            # The same application again: AlreadyExists (its UUIDs stay).
            with pytest.raises(BusError) as e:
                await c.call("RegisterApplication", "oa{sv}", ["/test/app", {}],
                             path="/org/bluez/hci0", iface="org.bluez.GattManager1")
            assert e.value.name == "org.bluez.Error.AlreadyExists"
            # Disconnect(): no auto-connect until the next Connect().
            await c.disconnect(lock)
            await asyncio.sleep(0.5)
            assert await c.get(lock, DEV, "Connected") is False
            await c.connect(lock)
            # The link drops (out of range); back in range, the lock is
            # connected with no Connect() pending; the band (not in the
            # profile) is not.
            t = time.monotonic()
            bench.cmd("out_of_range", peripheral="lock")
            await c.wait_change(lock, "Connected", False, t, timeout=5)
            bench.cmd("out_of_range", peripheral="band")
            await asyncio.sleep(0.3)
            t = time.monotonic()
            bench.cmd("in_range", peripheral="lock")
            bench.cmd("in_range", peripheral="band")
            await c.wait_change(lock, "ServicesResolved", True, t, timeout=5)
            assert await c.get(band, DEV, "Connected") is False
            # Unregistered: no more auto-connect.
            await c.call("UnregisterApplication", "o", ["/test/app"], path="/org/bluez/hci0",
                         iface="org.bluez.GattManager1")
            t = time.monotonic()
            bench.cmd("out_of_range", peripheral="lock")
            await c.wait_change(lock, "Connected", False, t, timeout=5)
            bench.cmd("in_range", peripheral="lock")
            await asyncio.sleep(0.5)
            assert await c.get(lock, DEV, "Connected") is False
            # A profile without UUIDs fails the registration.
            with pytest.raises(BusError) as e:
                await register_profile(c, "/test/empty", [])
            assert e.value.name == "org.bluez.Error.Failed"
    run(go())


def test_background_auto_connect_ends_when_its_client_leaves(bench):
    async def go():
        lock = bench.path("lock")
        async with Client(bench.bus) as c:
            await found(c, bench, "lock")
            await c.connect(lock)
            async with Client(bench.bus) as holder:
                await register_profile(holder, "/holder/app", [LOCK_SERVICE])
                t = time.monotonic()
                bench.cmd("out_of_range", peripheral="lock")
                await c.wait_change(lock, "Connected", False, t, timeout=5)
                t = time.monotonic()
                bench.cmd("in_range", peripheral="lock")
                await c.wait_change(lock, "Connected", True, t, timeout=5)
            t = time.monotonic()
            bench.cmd("out_of_range", peripheral="lock")
            await c.wait_change(lock, "Connected", False, t, timeout=5)
            await asyncio.sleep(0.2)  # the holder's leaving reaches BlueZoo
            bench.cmd("in_range", peripheral="lock")
            await asyncio.sleep(0.5)
            assert await c.get(lock, DEV, "Connected") is False
    run(go())


def test_disconnect_of_a_disconnected_device_takes_it_off_the_auto_connect_list(bench):
    """BlueZ's dev_disconnect turns auto-connect off for a device that is
    not Trusted whether or not it is connected; a later registration of a
    profile offering its services turns it back on."""
    async def go():
        async with Client(bench.bus) as c:
            lock = await linked(c, bench, "lock")
            t = time.monotonic()
            bench.cmd("out_of_range", peripheral="lock")
            await c.wait_change(lock, "Connected", False, t, timeout=5)
            await register_profile(c, "/test/app", [LOCK_SERVICE])
            await c.disconnect(lock)  # not connected: succeeds, and takes it off
            bench.cmd("in_range", peripheral="lock")
            await asyncio.sleep(0.5)
            assert await c.get(lock, DEV, "Connected") is False
            # A new registration probes the device again: back on the list.
            t = time.monotonic()
            await register_profile(c, "/test/app2", [LOCK_SERVICE])
            await c.wait_change(lock, "Connected", True, t, timeout=5)
    run(go())


def test_a_central_programs_profile_leaving_keeps_its_links(bench):
    """A program that registered only a GattProfile1 on the central's
    adapter (relinkd asking for auto-connect) is not a peripheral program:
    when it dies, the central's links stay up, as in BlueZ, where an
    application's end touches no link. (The bench drops the links of a
    peripheral whose GATT services went away.)"""
    async def go():
        async with Client(bench.bus) as c:
            lock = await linked(c, bench, "lock")
            t = time.monotonic()
            async with Client(bench.bus) as holder:
                await register_profile(holder, "/holder/app", [LOCK_SERVICE])
            await asyncio.sleep(1.5)  # past the bench's supervision timeout
            assert await c.get(lock, DEV, "Connected") is True
            assert False not in c.values(lock, "Connected", t)
    run(go())


def test_no_value_precedes_services_resolved_at_a_reconnection(bench):
    """BlueZ re-arms notify sessions at a reconnection with CCCD writes that
    complete a connection interval or more after ServicesResolved is
    signalled: with values pushed all the time, the first one after the
    reconnection still comes after ServicesResolved."""
    import threading

    async def go():
        async with Client(bench.bus) as c:
            lock, state = await subscribed(c, bench, "lock", LOCK_STATE)
            t = time.monotonic()
            bench.cmd("out_of_range", peripheral="lock")
            await c.wait_change(lock, "Connected", False, t, timeout=5)
            bench.cmd("in_range", peripheral="lock")
            stop = threading.Event()

            def push():
                n = 0
                while not stop.is_set():
                    n += 1
                    bench.cmd("push", peripheral="lock", value=f"{n % 256:02x}")

            pusher = threading.Thread(target=push)
            t = time.monotonic()
            pusher.start()
            try:
                await c.connect(lock)
                await c.wait_change(state, "Value", None, t, timeout=5)
                await asyncio.sleep(0.2)
            finally:
                stop.set()
                await asyncio.get_running_loop().run_in_executor(None, pusher.join)
            resolved = [ts for ts, p, _, ch in c.changes if ts >= t and p == lock and ch.get("ServicesResolved") is True]
            values = [ts for ts, p, _, ch in c.changes if ts >= t and p == state and "Value" in ch]
            assert resolved and values
            assert values[0] >= resolved[0], "a value came before ServicesResolved"
            assert len(values) >= 5, "too few values to tell"
            await c.disconnect(lock)
    run(go())


def test_a_lock_that_notifies_on_subscribe_sends_its_state_at_each_reconnection(bench):
    """`notify_on_subscribe`: the lock sends its current state when the
    central's session is armed (its CCCD write), as many locks do; a
    `silent` push only sets the state. The session kept across the drop is
    re-armed at the reconnection, so the state comes again then."""
    async def go():
        async with Client(bench.bus) as c:
            lock, state = await subscribed(c, bench, "lock", LOCK_STATE)
            assert bench.cmd("notify_on_subscribe", peripheral="lock", on=True)["notify_on_subscribe"] is True
            try:
                t = time.monotonic()
                bench.cmd("push", peripheral="lock", value="aa01", silent=True)
                with pytest.raises(AssertionError, match="timed out"):
                    await c.wait_change(state, "Value", None, t, timeout=0.5)
                bench.cmd("out_of_range", peripheral="lock")
                await c.wait_change(lock, "Connected", False, t, timeout=5)
                bench.cmd("push", peripheral="lock", value="aa02", silent=True)
                t = time.monotonic()
                bench.cmd("in_range", peripheral="lock")
                await c.connect(lock)
                assert bytes(await c.wait_change(state, "Value", None, t, timeout=5)) == bytes.fromhex("aa02")
                assert bench.cmd("get", peripheral="lock")["notify_on_subscribe"] is True
            finally:
                bench.cmd("notify_on_subscribe", peripheral="lock", on=False)
            with pytest.raises(RuntimeError, match="on must be true or false"):
                bench.cmd("notify_on_subscribe", peripheral="lock", on="yes")
            await c.disconnect(lock)
    run(go())


def test_included_services_and_descriptors_are_the_centrals_objects(bench):
    """Patch 13: `Includes` names the central's own service objects, and the
    descriptors of the lock (a user description, a presentation format, a
    vendor descriptor) are exported under their characteristic, readable,
    and the vendor one writable."""
    async def go():
        async with Client(bench.bus) as c:
            lock = await linked(c, bench, "lock")
            objects = await c.objects()
            services = {p: i["org.bluez.GattService1"] for p, i in objects.items()
                        if p.startswith(lock + "/") and "org.bluez.GattService1" in i}
            by_uuid = {s["UUID"]: p for p, s in services.items()}
            includes = services[by_uuid[LOCK_SERVICE]]["Includes"]
            assert includes == [by_uuid["0000180f-0000-1000-8000-00805f9b34fb"]]
            assert services[includes[0]]["Primary"] is False
            state = await c.char_path(lock, LOCK_STATE)
            descs = {i["org.bluez.GattDescriptor1"]["UUID"]: p for p, i in objects.items()
                     if p.startswith(state + "/") and "org.bluez.GattDescriptor1" in i}
            assert set(descs) == {"00002901-0000-1000-8000-00805f9b34fb", "00002904-0000-1000-8000-00805f9b34fb",
                                  "8e7f1aff-4b2c-4d1e-9a3f-72656c696e6b"}
            desc = "org.bluez.GattDescriptor1"
            value = await c.call("ReadValue", "a{sv}", [{}], path=descs["00002901-0000-1000-8000-00805f9b34fb"], iface=desc)
            assert bytes(value[0]) == b"Lock state"
            vendor = descs["8e7f1aff-4b2c-4d1e-9a3f-72656c696e6b"]
            await c.call("WriteValue", "aya{sv}", [b"\x3c", {}], path=vendor, iface=desc)
            assert bytes((await c.call("ReadValue", "a{sv}", [{}], path=vendor, iface=desc))[0]) == b"\x3c"
    run(go())
