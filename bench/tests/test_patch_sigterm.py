"""Patch 17: a SIGTERMed bluetoothd (BlueZoo) powers the adapters off and
calls LEAdvertisement1.Release on each registered advertisement as it exits
(real bluetoothd 5.66, docs/real-bluez.md); the next one powers them on."""

import asyncio

from busclient import Client


def _advertisement(released: list):
    from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property, method

    class Advertisement(ServiceInterface):
        def __init__(self):
            super().__init__("org.bluez.LEAdvertisement1")

        @method()
        def Release(self):
            released.append(True)

        @dbus_property(access=PropertyAccess.READ)
        def Type(self) -> "s":  # noqa: F821 (D-Bus signature)
            return "peripheral"

        @dbus_property(access=PropertyAccess.READ)
        def LocalName(self) -> "s":  # noqa: F821 (D-Bus signature)
            return "Released"

    return Advertisement()


def test_a_sigtermed_bluetoothd_releases_advertisements_and_powers_adapters_off(bench):
    async def go():
        released: list = []
        async with Client(bench.bus) as c:
            c.bus.export("/test/adv", _advertisement(released))
            await c.call("RegisterAdvertisement", "oa{sv}", ["/test/adv", {}], path="/org/bluez/hci0",
                         iface="org.bluez.LEAdvertisingManager1")
            await asyncio.get_running_loop().run_in_executor(None, lambda: bench.cmd("restart_bluez", signal="TERM"))
            assert released == [True], "Release was called on the advertisement"
            assert any(p == "/org/bluez/hci0" and ch.get("Powered") is False for _, p, _, ch in c.changes), \
                "the exiting bluetoothd powered the adapter off"
            assert await c.get("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") is True
            count = await c.get("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "ActiveInstances")
            assert count == 0, "the new bluetoothd has forgotten the advertisement"
    asyncio.run(asyncio.wait_for(go(), 90))
