"""Bleak (3.1.0) scenarios against a running bench, run in a process of their
own with DBUS_SYSTEM_BUS_ADDRESS set to the bench's bus:
  python bleak_scenario.py SCENARIO BENCH_DIR READY_JSON
Prints one JSON object with what was observed."""

import asyncio
import json
import os
import socket
import struct
import sys
import time

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakDBusError, BleakError
from bleak_retry_connector import establish_connection

LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
DEVICE_NAME = "00002a00-0000-1000-8000-00805f9b34fb"
BLUEZ = {"adapter": "hci0"}


def control(bench_dir: str, cmd: str, **args) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(60)
        s.connect(os.path.join(bench_dir, "control.sock"))
        s.sendall((json.dumps({"id": 1, "cmd": cmd, **args}) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    reply = json.loads(buf)
    if not reply.get("ok"):
        raise RuntimeError(f"{cmd}: {reply}")
    return reply


async def discover(ready: dict, bench_dir: str) -> dict:
    found = await BleakScanner.discover(timeout=1.5, return_adv=True, bluez=BLUEZ)
    everything = {addr: adv.local_name for addr, (dev, adv) in found.items()}
    filtered = await BleakScanner.discover(timeout=1.5, return_adv=True, bluez=BLUEZ,
                                           service_uuids=[HEART_RATE])
    return {"all": everything, "heart_rate": sorted(filtered),
            "uuids": {addr: adv.service_uuids for addr, (dev, adv) in found.items()},
            "rssi": {addr: adv.rssi for addr, (dev, adv) in found.items()}}


async def connect(ready: dict, bench_dir: str) -> dict:
    lock_addr = ready["peripherals"]["lock"]["address"]
    band_addr = ready["peripherals"]["band"]["address"]
    out: dict = {}
    dev = await BleakScanner.find_device_by_address(lock_addr, timeout=10, bluez=BLUEZ)
    assert dev is not None, "lock not found"
    out["scan_name"] = dev.name
    async with BleakClient(dev) as client:
        out["gap_name"] = (await client.read_gatt_char(DEVICE_NAME)).decode()
        out["state"] = (await client.read_gatt_char(LOCK_STATE)).decode()
        got: list[str] = []
        await client.start_notify(LOCK_STATE, lambda _, data: got.append(bytes(data).decode()))
        control(bench_dir, "push", peripheral="lock", state="unlocked")
        await client.write_gatt_char(LOCK_COMMAND, b"lock", response=True)
        await client.write_gatt_char(LOCK_COMMAND, b"unlock", response=False)
        deadline = time.monotonic() + 5
        while len(got) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        out["notifications"] = got
        await client.stop_notify(LOCK_STATE)
    band = await BleakScanner.find_device_by_address(band_addr, timeout=10, bluez=BLUEZ)
    assert band is not None, "band not found"
    async with BleakClient(band) as client:
        counters: list[int] = []
        await client.start_notify(HR_MEASUREMENT, lambda _, d: counters.append(
            struct.unpack("<BBI", bytes(d)[:6])[2]))
        await asyncio.sleep(2.0)
        await client.stop_notify(HR_MEASUREMENT)
        out["band_counters"] = counters
    return out


async def out_of_range(ready: dict, bench_dir: str) -> dict:
    lock_addr = ready["peripherals"]["lock"]["address"]
    out: dict = {}
    dev = await BleakScanner.find_device_by_address(lock_addr, timeout=10, bluez=BLUEZ)
    assert dev is not None, "lock not found"
    dropped = asyncio.Event()
    client = BleakClient(dev, disconnected_callback=lambda _: dropped.set())
    await client.connect()
    out["connected"] = client.is_connected
    t0 = time.monotonic()
    control(bench_dir, "out_of_range", peripheral="lock")
    await asyncio.wait_for(dropped.wait(), 10)
    out["drop_seconds"] = round(time.monotonic() - t0, 3)
    out["connected_after_drop"] = client.is_connected
    # BlueZ answers Failed "le-connection-abort-by-local"; bleak retries that
    # error by itself until its own timeout.
    t0 = time.monotonic()
    try:
        await client.connect(timeout=3)
        out["reconnect_while_away"] = "succeeded"
    except BleakDBusError as e:
        out["reconnect_while_away"] = [e.dbus_error, e.dbus_error_details]
    except asyncio.TimeoutError:
        out["reconnect_while_away"] = "timeout"
    except BleakError as e:
        out["reconnect_while_away"] = ["BleakError", str(e)]
    out["away_seconds"] = round(time.monotonic() - t0, 3)
    control(bench_dir, "in_range", peripheral="lock")
    # Home Assistant's way back: bleak-retry-connector.
    again = await establish_connection(BleakClient, dev, "lock", max_attempts=4)
    out["reconnected"] = again.is_connected
    out["state"] = (await again.read_gatt_char(LOCK_STATE)).decode()
    await again.disconnect()
    return out


SCENARIOS = {"discover": discover, "connect": connect, "out_of_range": out_of_range}

if __name__ == "__main__":
    name, bench_dir, ready = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    result = asyncio.run(SCENARIOS[name](ready, bench_dir))
    print(json.dumps(result))
