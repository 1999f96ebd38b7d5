"""Patch 27 (issue 24, rpa): a lock with privacy advertises from a rotating
resolvable private address; pairing resolves it to the identity on the same
Device1, later RPAs are resolved to it, and a restarted bluetoothd shows the
bonded device under its identity."""

import asyncio

from busclient import Client

DEV = "org.bluez.Device1"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


async def _agent(c: Client) -> None:
    """A NoInputNoOutput agent for this client (BlueZoo pairs through one)."""
    from dbus_fast.service import ServiceInterface, method

    class Agent(ServiceInterface):
        def __init__(self):
            super().__init__("org.bluez.Agent1")

        @method()
        def Release(self):
            pass

    c.bus.export("/test/agent", Agent())
    await c.call("RegisterAgent", "os", ["/test/agent", "NoInputNoOutput"], path="/org/bluez",
                 iface="org.bluez.AgentManager1")


async def _lock_devices(c: Client, identity: str) -> dict[str, tuple[str, str]]:
    """The central's devices that are the lock: path -> (Address, AddressType).
    An RPA is random with top bits 01; the identity is the lock's own."""
    found = {}
    for path, ifaces in (await c.objects()).items():
        dev = ifaces.get(DEV)
        if dev is None or not path.startswith("/org/bluez/hci0/"):
            continue
        address = dev["Address"]
        if address == identity or int(address[:2], 16) >> 6 == 0b01:
            found[path] = (address, dev["AddressType"])
    return found


async def _device_at(c: Client, address: str, timeout: float = 10.0) -> str:
    async def seen():
        for path, (a, _) in (await _lock_devices(c, "")).items():
            if a == address:
                return path
        return None
    return await c.wait_for(seen, timeout, f"a device at {address}")


def test_an_rpa_is_a_new_device_until_pairing_resolves_it_on_the_same_object(fresh_bench):
    bench = fresh_bench("--lock", "lock", "--lock-privacy")
    identity = bench.peripherals["lock"]["address"]

    async def go():
        async with Client(bench.bus) as c:
            await _agent(c)
            first = bench.cmd("rotate_address", peripheral="lock")["address"]
            assert int(first[:2], 16) >> 6 == 0b01, first
            await c.start_discovery()
            path = await _device_at(c, first)
            assert (await _lock_devices(c, identity))[path] == (first, "random")
            assert await c.get(path, DEV, "AddressType") == "random"
            # Unpaired: a new RPA is a new Device1; the old one is not reached.
            second = bench.cmd("rotate_address", peripheral="lock")["address"]
            second_path = await _device_at(c, second)
            assert second_path != path
            await c.connect(second_path)
            await c.call("Pair", path=second_path, iface=DEV)
            # The same object shows the identity now.
            await c.wait_for(lambda: _is(c, second_path, "Address", identity), 10, "the identity on the paired object")
            assert await c.get(second_path, DEV, "AddressType") == "public"
            await c.disconnect(second_path)
            # A later RPA is resolved to it: no new device; connectable through it.
            third = bench.cmd("rotate_address", peripheral="lock")["address"]
            bench.cmd("set_rssi", peripheral="lock", rssi=-30, noise=0)
            await c.wait_change(second_path, "RSSI", -30)   # the third RPA's report, on the paired device
            await c.connect(second_path)
            assert await c.get(second_path, DEV, "Connected") is True
            assert third not in {a for a, _ in (await _lock_devices(c, identity)).values()}
            await c.disconnect(second_path)
            await c.stop_discovery()
        # A restarted bluetoothd (a new RPA) loads the bond under the identity.
        bench.cmd("restart_bluez")
        async with Client(bench.bus) as c:
            await c.start_discovery()
            identity_path = "/org/bluez/hci0/dev_" + identity.replace(":", "_")
            await c.wait_device(identity_path)
            assert await c.get(identity_path, DEV, "Paired") is True
            await c.connect(identity_path)
            assert await c.get(identity_path, DEV, "Connected") is True
    run(go())


async def _is(c: Client, path: str, prop: str, value) -> bool:
    return await c.get(path, DEV, prop) == value

