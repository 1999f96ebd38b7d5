"""The bench inside a booted gateway image (run-bench --backend gateway).

As the real-bluetoothd backend (realbluez/backend.py: btvirt's controllers,
out of range = the peripheral's adapter powered off, re-advertising when the
central scans, half-open links dropped), except that bluetoothd is the
system's own `bluetooth.service`, started by systemd at boot with Debian's
configuration, and the bench never empties its storage: a gateway keeps
its bonds across reboots. A bluetoothd crash is `systemctl kill -s KILL`,
a stop `systemctl stop`; both are followed by `systemctl start`.

The guest suites of bench/realbluez count pairings in bluetoothd's debug
lines and run one case with another main.conf: RELINK_BLUETOOTHD_DEBUG=1
(`-d`) and RELINK_BLUETOOTHD_CONF (`-f FILE`) add those options to the
unit's own command line by a runtime drop-in (gone at the next boot), with
the journal's rate limit off for the unit so that no debug line is dropped;
bluetoothd is restarted when the drop-in changes, and the drop-in removed
(bluetoothd restarted as Debian runs it) when neither is set."""

import asyncio
import os
import shlex

from ..bench import BenchError
from ..dbusclient import BusClient
from ..realbluez.backend import SYSTEM_BUS, RealBluezBench

UNIT = "bluetooth.service"
DROP_IN = f"/run/systemd/system/{UNIT}.d/relink-bench.conf"


async def systemctl(*args: str, timeout: float = 60.0) -> str:
    proc = await asyncio.create_subprocess_exec(
        "systemctl", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        raise BenchError(f"systemctl {' '.join(args)}: no answer in {timeout} s")
    text = out.decode(errors="replace").strip()
    if proc.returncode != 0 and args[0] not in ("is-active",):
        raise BenchError(f"systemctl {' '.join(args)} failed ({proc.returncode}): {text}")
    return text


class GatewayBench(RealBluezBench):
    backend = "gateway"
    zoo_name = UNIT

    def __init__(self, opts):
        # Under emulation a gateway that has just booted takes longer than the
        # mock's 30 s to have bluetoothd up with every adapter powered.
        opts.start_timeout = max(opts.start_timeout, 120.0)
        super().__init__(opts)

    async def start_bus(self) -> None:
        if os.environ.get("RELINK_GATEWAY_GUEST") != "1":
            raise BenchError("the gateway backend runs only inside a gateway image "
                             "(bench/gateway/README.md): it powers the system's adapters on and off")
        self.bus_address = SYSTEM_BUS
        wanted = 1 + len(self.peripherals)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.opts.start_timeout
        while True:  # btvirt.service may still be bringing them up (a bench started at boot)
            missing = [f"hci{i}" for i in range(wanted) if not os.path.exists(f"/sys/class/bluetooth/hci{i}")]
            if not missing or loop.time() > deadline:
                break
            await asyncio.sleep(0.2)
        if missing:
            raise BenchError(f"the gateway has too few btvirt controllers for {wanted} "
                             f"(/etc/default/btvirt); missing: {', '.join(missing)}")
        self.client = BusClient(self.bus_address)
        await self.client.connect()
        await self._watch_discovery()

    async def _launch_zoo(self) -> None:
        """`systemctl start` (a no-op when it runs), then until bluetoothd
        shows hci0..hciN, every one powered: right after boot it may still be
        adding them (the base class's wait counts adapters, not which)."""
        if await self._configure_unit():
            await systemctl("restart", UNIT)
        else:
            await systemctl("start", UNIT)
        wanted = [f"/org/bluez/hci{i}" for i in range(1 + len(self.peripherals))]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.opts.start_timeout
        while True:
            try:
                objs = await self.client.managed_objects()
                adapters = [objs.get(p, {}).get("org.bluez.Adapter1") for p in wanted]
                if all(a is not None and a["Powered"].value for a in adapters):
                    return
            except Exception:  # bluetoothd not on the bus yet
                pass
            if loop.time() > deadline:
                raise BenchError(f"{UNIT}: {', '.join(wanted)} not all there and powered "
                                 f"within {self.opts.start_timeout} s")
            await asyncio.sleep(0.2)

    async def _configure_unit(self) -> bool:
        """The drop-in for RELINK_BLUETOOTHD_DEBUG and RELINK_BLUETOOTHD_CONF
        (see the module's doc) written or removed, and systemd told; True
        when it changed (bluetoothd must start again to follow it)."""
        options = (["-d"] if os.environ.get("RELINK_BLUETOOTHD_DEBUG") == "1" else []) + (
            ["-f", os.environ["RELINK_BLUETOOTHD_CONF"]] if os.environ.get("RELINK_BLUETOOTHD_CONF") else [])
        try:
            with open(DROP_IN) as f:
                old: str | None = f.read()
        except OSError:
            old = None
        if not options:
            if old is None:
                return False
            os.remove(DROP_IN)
        else:
            argv = await self._vendor_command()
            new = ("# run-bench --backend gateway (RELINK_BLUETOOTHD_DEBUG, RELINK_BLUETOOTHD_CONF)\n"
                   "[Service]\nExecStart=\n"
                   f"ExecStart={shlex.join(argv + options)}\nLogRateLimitIntervalSec=0\n")
            if new == old:
                return False
            os.makedirs(os.path.dirname(DROP_IN), exist_ok=True)
            with open(DROP_IN, "w") as f:
                f.write(new)
        await systemctl("daemon-reload")
        return True

    @staticmethod
    async def _vendor_command() -> list[str]:
        """The ExecStart= of the release's own unit file (not of a drop-in)."""
        path = (await systemctl("show", "-p", "FragmentPath", "--value", UNIT)).strip()
        with open(path) as f:
            for line in f:
                if line.startswith("ExecStart="):
                    return shlex.split(line.split("=", 1)[1])
        raise BenchError(f"{path}: no ExecStart= line")

    def _zoo_exited(self) -> bool:
        return False  # systemd's to watch; start_zoo's wait is bounded

    async def daemon_status(self) -> dict:
        """bluetooth.service as systemd sees it: running while `active` (or
        on its way up or down); a crash leaves it `failed`, with the signal
        in ExecMainStatus (Debian's unit does not restart it)."""
        state = await systemctl("is-active", UNIT)
        show = dict(line.split("=", 1) for line in
                    (await systemctl("show", "-p", "MainPID", "-p", "ExecMainStatus", UNIT)).splitlines()
                    if "=" in line)
        running = state in ("active", "activating", "deactivating", "reloading")
        return {"pid": int(show.get("MainPID") or 0) or None, "running": running,
                "returncode": None if running else int(show.get("ExecMainStatus") or 0), "unit_state": state}

    async def _stop_zoo(self, how: str) -> None:
        if await systemctl("is-active", UNIT) in ("inactive", "failed"):
            return  # already down (it crashed): started again by the caller
        if how == "KILL":
            await systemctl("kill", "--signal=SIGKILL", UNIT)
        else:
            await systemctl("stop", UNIT)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.opts.start_timeout
        while await systemctl("is-active", UNIT) in ("active", "deactivating"):
            if loop.time() > deadline:
                raise BenchError(f"{UNIT} still active {self.opts.start_timeout} s after {how}")
            await asyncio.sleep(0.1)
