"""The bench on real bluetoothd (run-bench --backend bluez), inside the VM.

The same launcher, control protocol and peripheral programs as the mock
bench; what differs:
  * the bus is the guest's system bus (bluetoothd's D-Bus policy applies);
  * "bluetoothd" is Debian's 5.66 with the bench's main.conf, started and
    restarted by the bench (run-vm --no-bluetoothd leaves it to us);
  * adapters are btvirt's controllers: hci0 the central, hciN the Nth
    peripheral, their addresses whatever btvirt gave them;
  * out of range = the peripheral's advertisement unregistered, then its
    adapter powered off (btvirt keeps advertising while powering off and a
    central would reconnect to the dying controller); back in range = powered
    on, then the advertisement registered again (btvirt sends one report when
    advertising starts: a central must already be scanning to see it);
  * btvirt sends one advertising report when advertising starts or when a
    scan starts, not a stream, and that report is lost when it reaches the
    kernel before the scan's start has completed (real-bluez.md, pitfall 1).
    A real peripheral advertises periodically, so the bench re-registers the
    advertisement of every in-range peripheral each time hci0 starts
    discovering (Discovering becomes true: the scan is running);
  * set_rssi and set_timing cannot be played (btvirt reports no RSSI; the
    kernel's timeouts are its own);
  * btvirt has no supervision timeout: a link one side no longer has stays
    up on the other side for ever. A real peripheral drops such a half-open
    link after its supervision timeout and advertises again; the bench does
    that for it (``_drop_half_open_links``)."""

import asyncio
import os
import re
import shutil
import subprocess
import sys

from dbus_fast import Message, MessageType

from ..bench import Bench, BenchError, Options, PeripheralSpec
from ..dbusclient import BusClient, BusError
from .bluetoothd import BLUETOOTHD, MAIN_CONF

SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket"
STORAGE = "/var/lib/bluetooth"


class RealBluezBench(Bench):
    backend = "bluez"
    unsupported = frozenset({"set_rssi", "set_timing", "rotate_address"})
    zoo_name = "bluetoothd"
    starts_unpowered = False

    # Seconds a peripheral may hold a link to the central that the central
    # does not have, before the bench drops it (real radios: the supervision
    # timeout, 0.1 to 32 s; BlueZ's default for LE connections is 0.42 s).
    HALF_OPEN_GRACE = 3.0

    def __init__(self, opts: Options):
        super().__init__(opts)
        self.readvertisements = 0
        self.half_open_drops = 0
        self._half_open_task: asyncio.Task | None = None

    def _env(self) -> dict[str, str]:
        env = super()._env()
        env["DBUS_SYSTEM_BUS_ADDRESS"] = SYSTEM_BUS
        return env

    def _log(self, name: str):
        # bluetoothd's log also goes where run-vm collects the guest's logs.
        logdir = os.environ.get("RELINK_REALBLUEZ_LOGDIR")
        if name == self.zoo_name and logdir and not self.opts.log_stderr:
            return os.path.join(logdir, "bluetoothd.log")
        return super()._log(name)

    def info(self):
        info = super().info()
        info["readvertisements"] = self.readvertisements
        info["half_open_drops"] = self.half_open_drops
        return info

    def _zoo_argv(self) -> list[str]:
        # RELINK_BLUETOOTHD_CONF: another main.conf (bench/realbluez/main-privacy.conf).
        return [BLUETOOTHD, "-n", "-d", "-f", os.environ.get("RELINK_BLUETOOTHD_CONF") or MAIN_CONF]

    async def start_bus(self) -> None:
        """No private bus: the guest's system bus, and btvirt's controllers.
        Only inside the VM (run-vm sets RELINK_REALBLUEZ_GUEST=1): the bench
        starts bluetoothd on the system bus, powers adapters and empties
        bluetoothd's storage, which must never happen on a real machine."""
        if os.environ.get("RELINK_REALBLUEZ_GUEST") != "1":
            raise BenchError("the bluez backend runs only inside the real-BlueZ VM "
                             "(bench/realbluez/run-vm --no-bluetoothd -- bench/run-bench --backend bluez ...)")
        self.bus_address = SYSTEM_BUS
        wanted = 1 + len(self.peripherals)
        missing = [f"hci{i}" for i in range(wanted) if not os.path.exists(f"/sys/class/bluetooth/hci{i}")]
        if missing or not os.path.exists("/run/dbus/system_bus_socket"):
            raise BenchError(f"the bluez backend runs inside the real-BlueZ VM with {wanted} "
                             f"controllers (bench/realbluez/run-vm --no-bluetoothd --controllers "
                             f"{wanted} -- bench/run-bench --backend bluez ...); missing: "
                             f"{', '.join(missing) or 'the system bus'}")
        self.client = BusClient(self.bus_address)
        await self.client.connect()
        if await self.client.name_owner("org.bluez"):
            raise BenchError("org.bluez is already owned: the bench starts its own bluetoothd "
                             "(boot with run-vm --no-bluetoothd)")
        self._forget_storage()
        await self._watch_discovery()

    async def _watch_discovery(self) -> None:
        """Re-advertise when hci0 starts discovering (see _readvertise)."""
        self.client.bus.add_message_handler(self._on_message)
        await self.client.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "AddMatch", "s", ["type='signal',sender='org.bluez',path='/org/bluez/hci0',"
                                                 "interface='org.freedesktop.DBus.Properties',"
                                                 "member='PropertiesChanged',arg0='org.bluez.Adapter1'"])

    @staticmethod
    def _forget_storage() -> None:
        """Every bench starts on a machine bluetoothd has never run on: the
        devices an earlier bench in the same VM connected are stored in
        /var/lib/bluetooth and would come back as known Device1 objects
        (a client would then find them without scanning). bluetoothd
        restarts within a bench keep the storage, as on a real machine."""
        for entry in os.listdir(STORAGE) if os.path.isdir(STORAGE) else []:
            shutil.rmtree(os.path.join(STORAGE, entry), ignore_errors=True)
        RealBluezBench._adapter_directories()

    @staticmethod
    def _adapter_directories() -> None:
        """/var/lib/bluetooth/<adapter address>/ for every controller, as a
        machine bluetoothd has run on has them. bluetoothd 5.66 writes an
        adapter's IRK (`Privacy = device`) to <adapter>/identity before it
        creates that directory (`generate_and_write_irk() Unable set contents
        for ...identity`): without it every bluetoothd start takes a new IRK,
        and a bonded peer's stored IRK no longer resolves the adapter's
        private addresses (docs/real-bluez.md difference 34)."""
        for hci in sorted(os.listdir("/sys/class/bluetooth")) if os.path.isdir("/sys/class/bluetooth") else []:
            if not re.fullmatch(r"hci\d+", hci):
                continue
            out = subprocess.run(["hciconfig", hci], capture_output=True, text=True, timeout=10).stdout
            found = re.search(r"BD Address: ([0-9A-F]{2}(?::[0-9A-F]{2}){5})", out)
            if found and found.group(1) != "00:00:00:00:00:00":
                os.makedirs(os.path.join(STORAGE, found.group(1)), mode=0o700, exist_ok=True)
            else:
                print(f"bench: no address for {hci} (hciconfig: {out.strip()[:200]!r}); "
                      "bluetoothd cannot keep its IRK", file=sys.stderr)

    def _on_message(self, msg: Message) -> None:
        if (msg.message_type == MessageType.SIGNAL and msg.member == "PropertiesChanged"
                and msg.path == "/org/bluez/hci0" and msg.body and msg.body[0] == "org.bluez.Adapter1"):
            discovering = msg.body[1].get("Discovering")
            if discovering is not None and discovering.value:
                asyncio.get_running_loop().create_task(self._readvertise())

    async def _readvertise(self) -> None:
        """The central started scanning: every in-range peripheral advertises
        once more (btvirt's one report), as a periodic advertiser would be seen."""
        for s in self.peripherals.values():
            if not s.in_range or s.child is None or not s.child.running:
                continue
            try:
                await self._advertise(s, False)
                await self._advertise(s, True)
                self.readvertisements += 1
            except (BenchError, RuntimeError, asyncio.TimeoutError) as e:
                print(f"bench: re-advertising {s.name} failed: {e}", file=sys.stderr)

    async def start_zoo(self) -> None:
        await super().start_zoo()
        await self._learn_addresses()
        if self._half_open_task is None:
            self._half_open_task = asyncio.get_running_loop().create_task(self._drop_half_open_links())

    async def stop(self) -> None:
        if self._half_open_task is not None:
            self._half_open_task.cancel()
        await super().stop()

    async def _drop_half_open_links(self) -> None:
        """Every second: a peripheral whose adapter holds a link to the
        central while the central's Device1 for it is not connected, for
        HALF_OPEN_GRACE seconds in a row, has that link disconnected on its
        side (what its supervision timeout would do). Seen without it: after
        a bluetoothd restart the lock's controller kept a link hci0 no longer
        had, never advertised again, and every Connect of hci0 failed with
        `Operation already in progress` for minutes (restart-survival suite)."""
        central = self.opts.central_address.replace(":", "_")
        since: dict[str, float] = {}
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(1.0)
            try:
                objs = await self.client.managed_objects()
            except Exception:  # bluetoothd restarting, or the bench stopping: never end the watch
                since.clear()
                continue
            for s in self.peripherals.values():
                if not s.address:
                    continue
                near = f"/org/bluez/{s.adapter}/dev_{central}"
                far = f"/org/bluez/hci0/dev_{s.address.replace(':', '_')}"
                near_up = objs.get(near, {}).get("org.bluez.Device1", {}).get("Connected")
                far_up = objs.get(far, {}).get("org.bluez.Device1", {}).get("Connected")
                if not (near_up is not None and near_up.value and not (far_up is not None and far_up.value)):
                    since.pop(s.name, None)
                    continue
                first = since.setdefault(s.name, loop.time())
                if loop.time() - first < self.HALF_OPEN_GRACE:
                    continue
                since.pop(s.name, None)
                print(f"bench: {s.name}: half-open link (its adapter connected to the central, hci0 not) "
                      f"for {self.HALF_OPEN_GRACE} s: dropped on its side", file=sys.stderr)
                try:
                    await self.client.call("org.bluez", near, "org.bluez.Device1", "Disconnect")
                    self.half_open_drops += 1
                except BusError as e:
                    print(f"bench: {s.name}: dropping the half-open link failed: {e}", file=sys.stderr)

    async def _learn_addresses(self) -> None:
        objs = await self.client.managed_objects()

        def address(adapter: str) -> str:
            props = objs.get(f"/org/bluez/{adapter}", {}).get("org.bluez.Adapter1")
            if props is None:
                raise BenchError(f"bluetoothd shows no {adapter}")
            return props["Address"].value
        self.opts.central_address = address("hci0")
        for s in self.peripherals.values():
            s.address = address(s.adapter)

    async def set_in_range(self, spec: PeripheralSpec, on: bool) -> None:
        running = spec.child is not None and spec.child.running
        spec.in_range = on
        if not on:
            if running:
                await self._advertise(spec, False)
            await self.client.set_powered(spec.adapter, False)
        else:
            await self.client.set_powered(spec.adapter, True)
            if running:
                await self._advertise(spec, True)

    async def _advertise(self, spec: PeripheralSpec, on: bool) -> None:
        reply = await spec.child.request("set_advertising", {"on": on})
        if not reply.get("ok"):
            raise BenchError(f"{spec.name}: {reply.get('error')}")

    async def start_peripheral(self, spec: PeripheralSpec) -> None:
        await super().start_peripheral(spec)
        if not spec.in_range:
            # Started while away: no advertisement until it is back.
            await self._advertise(spec, False)

    # The errors of a call to org.bluez while bluetoothd is not running.
    BLUEZ_GONE = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.Spawn.ChildExited",
                  "org.freedesktop.DBus.Error.NameHasNoOwner")

    async def restart_zoo(self, how: str = "KILL") -> None:
        """bluetoothd SIGKILLed (crash) or SIGTERMed (it powers the adapters
        off on the way out), then started again. Out-of-range peripherals are
        told not to advertise first, so they do not advertise between the new
        bluetoothd powering their adapter on and the bench powering it off.

        Before a SIGTERM every peripheral stops advertising, and the in-range
        ones advertise again once the new daemon runs: the exiting bluetoothd
        powers the peripherals' adapters off too (a real peripheral's
        controller is not the gateway's), btvirt keeps advertising while a
        controller powers off, and hci0 reconnected to such a dying
        controller at once: a half-open link the new bluetoothd found at its
        start (`get_connections_complete() Adding existing connection`),
        never resolved its services, and answered every later Connect with
        `Operation already in progress` (restart-survival suite, "reboot"
        cases, docs/real-bluez.md)."""
        running = [s for s in self.peripherals.values() if s.child is not None and s.child.running]
        for s in running:
            if not s.in_range or how == "TERM":
                try:
                    await self._advertise(s, False)
                except BenchError as e:
                    # bluetoothd already off the bus (the system bus then
                    # tries to start it and answers Spawn.ChildExited or
                    # ServiceUnknown): its advertisements went with it.
                    if not any(n in str(e) for n in self.BLUEZ_GONE):
                        raise
                    print(f"bench: {s.name}: no bluetoothd to unregister from before the restart: {e}",
                          file=sys.stderr)
        await super().restart_zoo(how)
        if how == "TERM":
            for s in running:
                if s.in_range and s.child.running:
                    await self._advertise(s, True)
