"""The bench's fault controls on real bluetoothd 5.66 (no relinkd): each
control does to a plain D-Bus central what it does on the mock, and what
real BlueZ does differently is measured and written to
LOGDIR/differences.json (docs/real-bluez.md quotes it). Runs inside the VM
(bench/realbluez/tests/test_real_smoke.py); skipped elsewhere."""

import asyncio
import json
import os
import time

import pytest
from dbus_fast import Variant

from realenv import HR_MEASUREMENT, IN_GUEST, LOGDIR, start_bench, stop_bench
from busclient import BusError, Client  # noqa: E402 (bench/tests is on sys.path via realenv)

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_smoke.py)")

SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket"
DEV = "org.bluez.Device1"
CHR = "org.bluez.GattCharacteristic1"
GAP = "00001800-0000-1000-8000-00805f9b34fb"


class Record:
    def __init__(self):
        self.items: dict[str, object] = {}
        self.path = os.path.join(LOGDIR, "differences.json")

    def __setitem__(self, key: str, value: object) -> None:
        self.items[key] = value
        with open(self.path, "w") as f:
            json.dump(self.items, f, indent=1)


async def cmd(bench, name: str, **args):
    # In a thread: the bench answers on a pipe, and the event loop must keep
    # reading (and time-stamping) bluetoothd's signals meanwhile.
    return await asyncio.to_thread(bench.cmd, name, timeout=90, **args)


async def discover(c: Client, device: str, timeout: float = 15) -> float:
    """Unfiltered LE discovery until the device appears (the bench
    re-advertises as hci0 starts discovering); seconds taken."""
    t0 = time.monotonic()
    await c.start_discovery({"Transport": Variant("s", "le")})
    try:
        await c.wait_device(device, timeout)
    finally:
        await c.stop_discovery()
    return round(time.monotonic() - t0, 2)


def first_change(c: Client, path: str, prop: str, value, since: float):
    return next((t for t, p, _, ch in c.changes if t >= since and p == path and ch.get(prop) == value
                 and prop in ch), None)


def test_fault_controls_on_real_bluetoothd():
    async def go(bench, rec: Record):
        band = bench.path("band")
        async with Client(SYSTEM_BUS) as c:
            rec["discover_s"] = await discover(c, band)
            rec["name_advertised"] = await c.get(band, DEV, "Name")

            t = time.monotonic()
            await c.connect(band)
            rec["connect_reply_s"] = round(time.monotonic() - t, 3)
            await c.wait_change(band, "ServicesResolved", True, t, timeout=15)
            resolved = first_change(c, band, "ServicesResolved", True, t)
            # Finding 2: is Connected=true signalled for the central's Device1?
            rec["connected_true_signalled"] = first_change(c, band, "Connected", True, t) is not None
            assert await c.get(band, DEV, "Connected") is True
            # Finding 3: ServicesResolved before the characteristic objects?
            chr_path = await c.char_path(band, HR_MEASUREMENT)
            added = next((a for a, p in c.added if p == chr_path and a >= t), None)
            rec["chr_added_minus_services_resolved_ms"] = (
                None if added is None else round((added - resolved) * 1000, 1))
            # Finding 5: names and the GAP service on 5.66.
            objs = await c.objects()
            services = [i["org.bluez.GattService1"]["UUID"] for p, i in objs.items()
                        if p.startswith(band + "/") and "org.bluez.GattService1" in i]
            rec["gatt_services_on_central"] = sorted(services)
            rec["device_uuids"] = sorted(await c.get(band, DEV, "UUIDs"))
            await c.wait_change(band, "Name", "Wrist Band", t, timeout=10)
            rec["name_after_connect"] = await c.get(band, DEV, "Name")
            assert GAP not in services, "5.66 hides the remote GAP service"

            # Notifications arrive.
            t = time.monotonic()
            await c.call("StartNotify", path=chr_path, iface=CHR)
            await c.wait_for(lambda: _n_values(c, chr_path, t, 3), 15, "3 values")

            # out_of_range: advertisement off, adapter off: the link drops.
            t = time.monotonic()
            await cmd(bench, "out_of_range", peripheral="band")
            await c.wait_change(band, "Connected", False, t, timeout=30)
            rec["out_of_range_to_connected_false_s"] = round(
                first_change(c, band, "Connected", False, t) - t, 2)
            t = time.monotonic()
            try:
                # Long bound: the kernel's LE connection attempt is not bounded
                # by bluetoothd (the mock's --connect-timeout stands for it).
                await c.call("Connect", path=band, iface=DEV, timeout=120)
                rec["connect_out_of_range"] = "succeeded"
            except BusError as e:
                rec["connect_out_of_range"] = f"{e.name}: {e.text}"
            rec["connect_out_of_range_s"] = round(time.monotonic() - t, 2)
            assert rec.items["connect_out_of_range"] != "succeeded"

            # in_range: adapter on, advertisement again; found and connected.
            await cmd(bench, "in_range", peripheral="band")
            if band not in await c.objects():
                rec["device_gone_after_out_of_range"] = True
                await discover(c, band)
            t = time.monotonic()
            await _connect_while_scanning(c, bench, band)
            rec["in_range_connect_s"] = round(time.monotonic() - t, 2)
            chr_path = await c.char_path(band, HR_MEASUREMENT)
            t = time.monotonic()
            await c.wait_for(lambda: _n_values(c, chr_path, t, 2), 15, "values after in_range "
                             "(notify session re-armed by bluetoothd)")

            # kill_peripheral: the GATT application goes, the link stays?
            t = time.monotonic()
            await cmd(bench, "kill_peripheral", peripheral="band")
            await c.wait_for(lambda: _removed(c, chr_path, t), 15, "the band's services removed")
            rec["kill_peripheral_link_stays"] = await c.get(band, DEV, "Connected")
            t = time.monotonic()
            await cmd(bench, "start_peripheral", peripheral="band")
            new_chr = await c.wait_for(lambda: _char_again(c, band), 15,
                                       "the band's characteristic back")
            rec["restarted_app_char_paths"] = [chr_path, new_chr]

            # power_cycle_central: links drop.
            t = time.monotonic()
            await cmd(bench, "power_cycle_central")
            if await c.get(band, DEV, "Connected"):
                await c.wait_change(band, "Connected", False, t, timeout=15)
            rec["power_cycle_central_drops_link"] = True

            # restart_bluez KILL / TERM: the bench's peripherals re-register;
            # what happens to the central's Device1?
            for how in ("KILL", "TERM"):
                t = time.monotonic()
                reply = await cmd(bench, "restart_bluez", signal=how)
                rec[f"restart_{how.lower()}_s"] = round(time.monotonic() - t, 2)
                rec[f"restart_{how.lower()}_device_kept"] = band in await c.objects()
                assert reply["pid"] != reply["old_pid"]
            if band not in await c.objects():
                await discover(c, band)
            t = time.monotonic()
            await _connect_while_scanning(c, bench, band)
            rec["connect_after_restarts_s"] = round(time.monotonic() - t, 2)

    rec = Record()
    bench = start_bench("--band", "band")
    try:
        asyncio.run(asyncio.wait_for(go(bench, rec), 600))
    finally:
        stop_bench(bench)


async def _connect_while_scanning(c: Client, bench, device: str, attempts: int = 5) -> None:
    """btvirt connects only while the peer advertises: scan (which makes the
    bench re-advertise), then Connect; a few bounded attempts."""
    from dbus_fast import Variant
    last = None
    for _ in range(attempts):
        await c.start_discovery({"Transport": Variant("s", "le")})
        try:
            await c.connect(device)
            return
        except BusError as e:
            last = e
        finally:
            await c.stop_discovery()
    raise AssertionError(f"Connect failed {attempts} times: {last}")


async def _n_values(c: Client, path: str, since: float, n: int) -> bool:
    return len(c.values(path, "Value", since)) >= n


async def _removed(c: Client, path: str, since: float) -> bool:
    return any(p == path and t >= since for t, p in c.removed)


async def _char_again(c: Client, device: str):
    try:
        return await c.char_path(device, HR_MEASUREMENT)
    except AssertionError:
        return None
