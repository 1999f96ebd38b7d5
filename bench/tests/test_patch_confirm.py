"""Patch 20: a peripheral program's Confirm() is called for an indication
only, not after each notification (bluetoothd passes a confirmation
callback only to bt_gatt_server_send_indication)."""

import asyncio

from busclient import Client

LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
CHR = "org.bluez.GattCharacteristic1"


def test_notifications_are_not_confirmed(bench):
    async def go():
        async with Client(bench.bus) as c:
            lock = bench.path("lock")
            await c.start_discovery()
            await c.wait_device(lock)
            await c.stop_discovery()
            await c.connect(lock)
            state = await c.char_path(lock, LOCK_STATE)
            await c.call("StartNotify", path=state, iface=CHR)
            for value in ("unlocked", "locked", "unlocked"):
                seen = len([1 for _, p, _, ch in c.changes if p == state and "Value" in ch])
                bench.cmd("push", peripheral="lock", state=value)

                async def arrived(seen=seen):
                    return len([1 for _, p, _, ch in c.changes if p == state and "Value" in ch]) > seen
                await c.wait_for(arrived, 10, f"the {value} notification")
            # The lock's state notifies (flags read, notify): none was confirmed.
            assert bench.cmd("get", peripheral="lock")["confirms"] == 0
            await c.disconnect(lock)
    asyncio.run(asyncio.wait_for(go(), 90))
