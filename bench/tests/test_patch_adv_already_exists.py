"""Patch 30: bluetoothd answers a client that registers the same
advertisement path again with org.bluez.Error.AlreadyExists, before it
counts an advertising instance (src/advertising.c, register_advertisement,
5.66 to 5.8x); BlueZoo 1.0.2 counted it against the instances and answered
NotPermitted when none was left, which relinkd took for a full controller
(e2e test_a_restored_advertisement_that_does_not_fit..., seen in a CI-like
run)."""

import asyncio

import pytest

from busclient import BusError, Client
from test_patch_sigterm import _advertisement

MANAGER = "org.bluez.LEAdvertisingManager1"


def test_registering_the_same_advertisement_again_is_already_exists_even_with_no_instance_left(bench):
    async def go():
        async with Client(bench.bus) as c:
            c.bus.export("/test/adv", _advertisement([]))
            c.bus.export("/test/other", _advertisement([]))
            await asyncio.get_running_loop().run_in_executor(None, lambda: bench.cmd("set_advertising_instances", instances=1))
            await c.call("RegisterAdvertisement", "oa{sv}", ["/test/adv", {}], path="/org/bluez/hci0", iface=MANAGER)
            with pytest.raises(BusError) as again:
                await c.call("RegisterAdvertisement", "oa{sv}", ["/test/adv", {}], path="/org/bluez/hci0", iface=MANAGER)
            assert again.value.name == "org.bluez.Error.AlreadyExists", again.value
            with pytest.raises(BusError) as other:
                await c.call("RegisterAdvertisement", "oa{sv}", ["/test/other", {}], path="/org/bluez/hci0", iface=MANAGER)
            assert other.value.name == "org.bluez.Error.NotPermitted", other.value
            assert await c.get("/org/bluez/hci0", MANAGER, "ActiveInstances") == 1
    try:
        asyncio.run(asyncio.wait_for(go(), 60))
    finally:
        bench.cmd("set_advertising_instances", instances=15)
