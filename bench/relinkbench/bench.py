"""The bench: a private dbus-daemon, the patched BlueZoo and the peripherals,
in one temporary directory; everything it starts it also stops."""

import asyncio
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from . import busconf
from .children import Child, LineChild
from dbus_fast import Variant

from .dbusclient import BusClient

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ADV_PREFIX = {"lock": "RLK", "band": "HRM", "beacon": "BCN", "remote": "RMT"}
ADV_SUFFIXES = {"lock": ["7F3A", "7F3B", "7F3C", "7F3D"], "band": ["2C41", "2C42", "2C43", "2C44"],
                "beacon": ["0001", "0002", "0003", "0004"], "remote": ["0001", "0002", "0003", "0004"]}
GAP_NAMES = {"lock": ["Front Door", "Back Door", "Garage", "Shed"],
             "band": ["Wrist Band", "Wrist Band 2", "Wrist Band 3", "Wrist Band 4"],
             "beacon": ["Beacon", "Beacon 2", "Beacon 3", "Beacon 4"],
             "remote": ["Remote Central", "Remote Central 2", "Remote Central 3", "Remote Central 4"]}
# Kinds that are only an adapter, with no program on it: a remote central
# (issue 23) drives its adapter itself, as a third-party client (bleak,
# bluetoothctl, plain org.bluez calls) would.
PROGRAMLESS = ("remote",)


class BenchError(Exception):
    pass


@dataclass
class PeripheralSpec:
    name: str
    kind: str
    index: int            # 1-based adapter index (hciN)
    adv_name: str
    gap_name: str
    address: str
    rssi: int = -60
    noise: int = 3
    in_range: bool = True
    registrations: int = 0
    child: Optional[LineChild] = None
    registered: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def adapter(self) -> str:
        return f"hci{self.index}"


@dataclass
class Options:
    peripherals: list[tuple[str, str]]      # (kind, name)
    central_address: str = "00:00:00:00:00:01"
    scan_interval: float = 0.2
    connect_timeout: float = 1.0
    supervision_timeout: float = 0.5
    gap_service: str = "exported"
    temporary_timeout: float = 30.0
    advertising_instances: int = 15
    band_rate: float = 2.0
    lock_security: str = "none"
    # Patch 27: each lock's adapter advertises from a rotating resolvable
    # private address (issue 24, rpa).
    lock_privacy: bool = False
    parent_dir: Optional[str] = None
    keep_dir: bool = False
    log_stderr: bool = False
    verbose: int = 0
    start_timeout: float = 30.0


class Bench:
    backend = "mock"
    # Commands this backend cannot play.
    unsupported: frozenset = frozenset()

    def __init__(self, opts: Options):
        self.opts = opts
        self.dir = ""
        self.bus_address = ""
        self.dbus: Optional[Child] = None
        self.zoo: Optional[Child] = None
        self.client: Optional[BusClient] = None
        self.peripherals: dict[str, PeripheralSpec] = {}
        self.central_powered = True
        counts: dict[str, int] = {}
        for i, (kind, name) in enumerate(opts.peripherals, start=1):
            if name in self.peripherals:
                raise BenchError(f"peripheral name {name!r} used twice")
            n = counts.get(kind, 0)
            counts[kind] = n + 1
            self.peripherals[name] = PeripheralSpec(
                name=name, kind=kind, index=i,
                adv_name=f"{ADV_PREFIX[kind]}-{ADV_SUFFIXES[kind][n % 4]}",
                gap_name=GAP_NAMES[kind][n % 4] if n < 4 else f"{GAP_NAMES[kind][0]} {n + 1}",
                address=f"00:00:00:00:00:{i + 1:02X}")

    # -- paths and environment -------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["DBUS_SYSTEM_BUS_ADDRESS"] = self.bus_address
        env["PYTHONPATH"] = BENCH_DIR + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        return env

    def _log(self, name: str) -> Optional[str]:
        return None if self.opts.log_stderr else os.path.join(self.dir, f"{name}.log")

    def device_path(self, spec: PeripheralSpec) -> str:
        return f"/org/bluez/hci0/dev_{spec.address.replace(':', '_')}"

    def info(self) -> dict[str, Any]:
        return {
            "event": "ready", "backend": self.backend, "bus": self.bus_address, "dir": self.dir,
            "central": {"adapter": "hci0", "address": self.opts.central_address},
            "peripherals": {
                s.name: {"kind": s.kind, "adapter": s.adapter, "address": s.address,
                         "device_path": self.device_path(s), "adv_name": s.adv_name,
                         "gap_name": s.gap_name}
                for s in self.peripherals.values()},
        }

    # -- start -------------------------------------------------------------------

    async def start(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="relink-bench-", dir=self.opts.parent_dir)
        await self.start_bus()
        await self.start_zoo()
        await asyncio.gather(*(self.start_peripheral(s) for s in self.peripherals.values()
                               if s.kind not in PROGRAMLESS))

    async def start_bus(self) -> None:
        """A private dbus-daemon, and the launcher's connection to it."""
        socket_path = os.path.join(self.dir, "bus")
        self.bus_address = f"unix:path={socket_path}"
        conf = os.path.join(self.dir, "bus.conf")
        services = os.path.join(self.dir, "services")
        os.makedirs(services, exist_ok=True)
        with open(conf, "w") as f:
            f.write(busconf.render(socket_path, services))
        self.dbus = Child("dbus-daemon", ["dbus-daemon", f"--config-file={conf}", "--nofork",
                                          "--nopidfile", "--nosyslog"],
                          self._env(), self._log("dbus-daemon"))
        await self.dbus.start()
        deadline = time.monotonic() + self.opts.start_timeout
        while True:
            if not self.dbus.running:
                raise BenchError("dbus-daemon exited at start")
            try:
                self.client = BusClient(self.bus_address)
                await self.client.connect()
                break
            except (OSError, Exception) as e:
                if time.monotonic() > deadline:
                    raise BenchError(f"private bus did not come up: {e}")
                await asyncio.sleep(0.02)

    def _zoo_argv(self) -> list[str]:
        argv = [sys.executable, "-m", "relinkbench.zoo", "--bench-dir", self.dir,
                "--scan-interval", str(self.opts.scan_interval),
                "--connect-timeout", str(self.opts.connect_timeout),
                "--supervision-timeout", str(self.opts.supervision_timeout),
                "--gap-service", self.opts.gap_service,
                "--temporary-timeout", str(self.opts.temporary_timeout),
                "--advertising-instances", str(self.opts.advertising_instances), "-a", self.opts.central_address]
        for s in self.peripherals.values():
            argv += ["-a", s.address, "--rssi", f"{s.address}={s.rssi}:{s.noise}"]
            if not s.in_range:
                argv += ["--unpowered", s.address]
            if self.opts.lock_privacy and s.kind == "lock":
                argv += ["--privacy", s.address]
        if not self.central_powered:
            argv += ["--unpowered", self.opts.central_address]
        argv += ["-v"] * self.opts.verbose
        return argv

    zoo_name = "bluezoo"
    # The zoo takes `--unpowered` (real bluetoothd powers every adapter on).
    starts_unpowered = True

    async def _launch_zoo(self) -> None:
        """Start bluetoothd (or BlueZoo) as the bench's own child."""
        self.zoo = Child(self.zoo_name, self._zoo_argv(), self._env(), self._log(self.zoo_name))
        await self.zoo.start()

    def _zoo_exited(self) -> bool:
        return self.zoo is not None and not self.zoo.running

    async def daemon_status(self) -> dict:
        """Whether bluetoothd (BlueZoo) still runs, and how it ended if not
        (a crash shows as a negative signal number): the `status` command's
        "bluetoothd"."""
        zoo = self.zoo
        return {"pid": zoo.pid if zoo else None, "running": bool(zoo and zoo.running),
                "returncode": zoo.proc.returncode if zoo and zoo.proc else None}

    async def _stop_zoo(self, how: str) -> None:
        """bluetoothd crashes (KILL) or stops (TERM)."""
        if self.zoo is not None:
            if how == "KILL":
                self.zoo.kill()
            # A TERM restart must not turn into a KILL because the daemon
            # takes a while to shut down (bluetoothd powers adapters off).
            await self.zoo.stop(timeout=self.opts.start_timeout)

    async def start_zoo(self) -> None:
        await self._launch_zoo()
        deadline = time.monotonic() + self.opts.start_timeout
        # Adapters come up as the world outside bluetoothd has them: out of
        # range peripherals (and a central switched off) stay powered off, so
        # that a scanning client never sees them on for a moment.
        every = 1 + len(self.peripherals)
        wanted = every if not self.starts_unpowered else (
            int(self.central_powered) + sum(1 for s in self.peripherals.values() if s.in_range))
        while True:
            if self._zoo_exited():
                raise BenchError(f"{self.zoo_name} exited at start" + self._tail(self.zoo_name))
            if await self.client.name_owner("org.bluez"):
                try:
                    objs = await self.client.managed_objects()
                    adapters = [ifs["org.bluez.Adapter1"] for ifs in objs.values() if "org.bluez.Adapter1" in ifs]
                    powered = [a for a in adapters if a["Powered"].value]
                    if len(adapters) >= every and len(powered) >= wanted:
                        break
                except Exception:
                    pass
            if time.monotonic() > deadline:
                raise BenchError(f"{self.zoo_name} did not come up" + self._tail(self.zoo_name))
            await asyncio.sleep(0.05)
        await self.client.call("org.bluez", "/org/bluez/hci0", "org.freedesktop.DBus.Properties",
                               "Set", "ssv", ["org.bluez.Adapter1", "Alias",
                                              Variant("s", "relink-bench central")])
        await self.reapply_world()

    async def reapply_world(self) -> None:
        """The world outside bluetoothd does not change when it restarts."""
        for s in self.peripherals.values():
            if not s.in_range:
                await self.client.set_powered(s.adapter, False)
        if not self.central_powered:
            await self.client.set_powered("hci0", False)

    async def set_in_range(self, spec: PeripheralSpec, on: bool) -> None:
        """Out of range: the peripheral's adapter powered off."""
        spec.in_range = on
        await self.client.set_powered(spec.adapter, on)

    def _tail(self, name: str) -> str:
        path = self._log(name)
        if path and os.path.exists(path):
            with open(path, errors="replace") as f:
                return "\n" + "".join(f.readlines()[-15:])
        return ""

    def _on_peripheral_event(self, spec: PeripheralSpec, msg: dict) -> None:
        if msg.get("event") == "registered":
            spec.registrations = int(msg.get("registrations", 0))
            spec.registered.set()
        elif msg.get("event") == "exited":
            spec.registered.clear()

    async def start_peripheral(self, spec: PeripheralSpec) -> None:
        if spec.kind in PROGRAMLESS:
            raise BenchError(f"{spec.name} is a {spec.kind}: an adapter with no program")
        if spec.child is not None and spec.child.running:
            raise BenchError(f"peripheral {spec.name} is already running")
        spec.registered.clear()
        argv = [sys.executable, "-m", "relinkbench.peripheral", "--kind", spec.kind,
                "--name", spec.name, "--adapter", spec.adapter, "--bench-dir", self.dir,
                "--adv-name", spec.adv_name, "--gap-name", spec.gap_name]
        if spec.kind == "band":
            argv += ["--rate", str(self.opts.band_rate)]
        if spec.kind == "lock":
            argv += ["--security", self.opts.lock_security]
        spec.child = LineChild(spec.name, argv, self._env(), self._log(spec.name),
                               lambda msg: self._on_peripheral_event(spec, msg))
        await spec.child.start()
        try:
            await asyncio.wait_for(spec.registered.wait(), self.opts.start_timeout)
        except asyncio.TimeoutError:
            raise BenchError(f"peripheral {spec.name} did not register" + self._tail(spec.name))

    async def wait_registrations(self, before: dict[str, int], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for s in self.peripherals.values():
            if s.child is None or not s.child.running:
                continue
            while s.registrations <= before.get(s.name, 0):
                if time.monotonic() > deadline:
                    raise BenchError(f"peripheral {s.name} did not re-register")
                await asyncio.sleep(0.02)

    async def restart_zoo(self, how: str = "KILL") -> None:
        """bluetoothd crash (KILL) or stop (TERM) and restart: start again,
        wait until every running peripheral has registered again."""
        before = {s.name: s.registrations for s in self.peripherals.values()}
        await self._stop_zoo(how)
        await self.start_zoo()
        await self.wait_registrations(before, self.opts.start_timeout)

    # -- stop --------------------------------------------------------------------

    def pids(self) -> list[int]:
        children = [self.dbus, self.zoo] + [s.child for s in self.peripherals.values()]
        return [c.pid for c in children if c is not None and c.running and c.pid]

    async def stop(self) -> None:
        await asyncio.gather(*(s.child.stop() for s in self.peripherals.values()
                               if s.child is not None))
        if self.zoo is not None:
            await self.zoo.stop()
        if self.client is not None:
            self.client.close()
        if self.dbus is not None:
            await self.dbus.stop()
        if self.dir and not self.opts.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
