"""What gatt_bench.py, write_bench.py and transfer_bench.py share: one bench with one lock, a
release relinkd on its bus, and one identifier registered with a
connection intent on the lock; D-Bus calls that raise on an error reply.

Every process started here is stopped by `close()` (and dies with this
process: PR_SET_PDEATHSIG)."""

import asyncio
import os
import tempfile
import time

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from restore_bench import Bench, BenchFailure, device_path, die_with_parent
from relinkd_client import central_path

LOCK = "lock0"
LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"


class LockSession:
    def __init__(self, relinkd: str, identifier: str, prefix: str):
        self.binary = relinkd
        self.identifier = identifier
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.bench = Bench(1, 5.0, self.work)
        self.bus: MessageBus | None = None
        self.relinkd: asyncio.subprocess.Process | None = None

    @property
    def central(self) -> str:
        return central_path(self.identifier)

    @property
    def address(self) -> str:
        return self.bench.address(LOCK)

    async def call(self, dest: str, path: str, iface: str, member: str, sig: str = "", body=None):
        reply = await self.bus.call(Message(destination=dest, path=path, interface=iface, member=member,
                                            signature=sig, body=body or []))
        if reply.message_type == MessageType.ERROR:
            raise BenchFailure(f"{member}: {reply.error_name} {reply.body}")
        return reply.body

    async def start(self, on_message) -> None:
        """The bench, a bus connection handing every message to
        `on_message`, relinkd, and the identifier registered."""
        await self.bench.start()
        self.bus = await MessageBus(bus_address=self.bench.bus, bus_type=BusType.SYSTEM).connect()
        self.bus.add_message_handler(on_message)
        await self._launch_and_register()

    async def kill_and_restart_relinkd(self) -> None:
        """SIGKILL relinkd, start it again on the same store, Register again."""
        self.relinkd.kill()
        await self.relinkd.wait()
        await self._launch_and_register()

    async def _launch_and_register(self) -> None:
        with open(os.path.join(self.work, "relinkd.log"), "ab") as log:
            self.relinkd = await asyncio.create_subprocess_exec(
                self.binary, "--bus-address", self.bench.bus, "--state-directory", os.path.join(self.work, "state"),
                "--log-destination", "stderr", "--log-level", "info", stdin=asyncio.subprocess.DEVNULL,
                stdout=log, stderr=log, preexec_fn=die_with_parent)
        for _ in range(600):
            try:
                await self.call("org.relink", "/org/relink", "org.relink.Manager1", "Register", "sa{sv}", [self.identifier, {}])
                return
            except BenchFailure:
                await asyncio.sleep(0.05)  # relinkd not on the bus yet: poll, bounded by the loop
        raise BenchFailure("relinkd never answered Register")

    async def lock_characteristic(self, uuid: str) -> tuple[str, dict]:
        """The lock's characteristic `uuid` on bluetoothd: its object path and properties."""
        [objects] = await self.call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        device = device_path(self.bench, LOCK)
        for path, ifaces in objects.items():
            props = ifaces.get("org.bluez.GattCharacteristic1", {})
            if path.startswith(device + "/") and props.get("UUID", Variant("s", "")).value == uuid:
                return path, props
        raise BenchFailure(f"the lock has no characteristic {uuid} on bluetoothd")

    async def lock_field(self, field: str) -> int:
        """A number of the lock's state (`get`), e.g. `writes`."""
        return int((await self.bench.cmd("get", peripheral=LOCK))[field])

    async def lock_reached(self, field: str, target: int, timeout: float = 60) -> float:
        """When the lock's `field` reached `target` (polled every 2 ms, bounded)."""
        deadline = time.monotonic() + timeout
        while True:
            n = await self.lock_field(field)
            if n >= target:
                return time.monotonic()
            if time.monotonic() > deadline:
                raise BenchFailure(f"the lock's {field} is {n}, {target} expected")
            await asyncio.sleep(0.002)  # polling the bench, bounded by the deadline

    async def connect_lock(self) -> None:
        """The identifier's connection intent on the lock (the caller waits for `connected`)."""
        await self.call("org.relink", self.central, "org.relink.Central1", "Connect", "sa{sv}",
                        [self.address, {"services": Variant("as", [LOCK_SERVICE])}])

    async def close(self) -> None:
        if self.relinkd and self.relinkd.returncode is None:
            self.relinkd.kill()
            await self.relinkd.wait()
        if self.bus:
            self.bus.disconnect()
        await self.bench.stop()
