"""The peer relinkd is measured against: what a Linux user would write today to
keep lock links alive with bleak 3.1.0 + bleak-retry-connector 4.7.1.

  DBUS_SYSTEM_BUS_ADDRESS=... python bleak_peer.py ADDRESS [ADDRESS ...]

Per address, concurrently and forever: find the device BlueZ already knows on
hci0 (no scan; a scan only when BlueZ does not know it), connect with
`establish_connection` (its retries and backoff; services from bleak's
cache), subscribe to the lock state with `start_notify`, wait for the link to
drop, and start again at once. Nothing is persisted: after a restart the
script does all of it again (bleak adopts a link BlueZ still holds).

Prints one JSON object per line on stdout, flushed:
  {"ev": "value", "address": A, "hex": H, "t": MONOTONIC}   (from the notify callback)
  {"ev": "subscribed" | "disconnected" | "error", "address": A, ...}
"""

import asyncio
import json
import sys
import time

from bleak import BleakScanner
from bleak.backends.bluezdbus.manager import get_global_bluez_manager
from bleak.exc import BleakError
from bleak_retry_connector import (BleakClientWithServiceCache, establish_connection,
                                   get_device_by_adapter)

LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
ADAPTER = "hci0"


def emit(ev: str, address: str, **fields) -> None:
    sys.stdout.write(json.dumps({"ev": ev, "address": address, **fields}) + "\n")
    sys.stdout.flush()


async def keep_link(address: str) -> None:
    def on_value(_char, data: bytearray) -> None:
        emit("value", address, hex=bytes(data).hex(), t=time.monotonic())

    while True:
        device = await get_device_by_adapter(address, ADAPTER)
        if device is None:
            device = await BleakScanner.find_device_by_address(address, timeout=10,
                                                               bluez={"adapter": ADAPTER})
        if device is None:
            emit("error", address, error="not found")
            continue
        lost = asyncio.Event()
        try:
            client = await establish_connection(BleakClientWithServiceCache, device, address,
                                                disconnected_callback=lambda _c: lost.set())
        except (BleakError, asyncio.TimeoutError) as e:
            # establish_connection has already backed off between its attempts.
            emit("error", address, error=f"connect: {type(e).__name__}: {e}"[:300])
            continue
        try:
            await client.start_notify(LOCK_STATE, on_value)
        except (BleakError, asyncio.TimeoutError) as e:
            emit("error", address, error=f"start_notify: {type(e).__name__}: {e}"[:300])
            try:
                await client.disconnect()
            except (BleakError, asyncio.TimeoutError):
                pass
            continue
        emit("subscribed", address)
        await lost.wait()
        emit("disconnected", address)


async def main(addresses: list[str]) -> None:
    # Initialise bleak's BlueZ manager once before the links start: otherwise
    # bleak-retry-connector's lookups in the other tasks find the manager
    # created but not yet loaded (get_global_bluez_manager_sync), get no
    # devices, fall back to a scan that cannot see a connected lock, and lose
    # 10 s (seen here with 2 links).
    await get_global_bluez_manager()
    await asyncio.gather(*(keep_link(a) for a in addresses))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: bleak_peer.py ADDRESS [ADDRESS ...]")
    asyncio.run(main(sys.argv[1:]))
