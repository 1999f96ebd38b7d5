"""The control protocol: one JSON object per line, {"id": N, "cmd": NAME, ...};
the reply is {"id": N, "ok": true, ...} or {"id": N, "ok": false, "error": TEXT}.
The same commands arrive on the launcher's stdin and on DIR/control.sock."""

import asyncio
import json
from typing import Any, Callable

from .bench import Bench, BenchError, PeripheralSpec
from .dbusclient import BusError

# Commands forwarded to the peripheral process, with the kinds that accept them.
FORWARDED = {
    "get": ("lock", "band", "beacon"),
    "set_adv_name": ("lock", "band"),
    "set_gap_name": ("lock", "band"),
    "set_advertising": ("lock", "band", "beacon"),
    "push": ("lock", "band"),
    "notify_on_subscribe": ("lock",),
    "firmware_log": ("lock",),
    "start_stream": ("band",),
    "stop_stream": ("band",),
    "set_rate": ("band",),
    "set_beacon": ("beacon",),
}

HELP = {
    "ping": "check the bench answers",
    "status": "bench info plus every peripheral's state",
    "out_of_range": "peripheral: power its adapter off (links drop, Connect fails)",
    "in_range": "peripheral: power its adapter on again",
    "set_adv_name": "peripheral, name: change the advertised Local Name",
    "set_gap_name": "peripheral, name: change the GAP Device Name (0x2A00: its adapter's Alias)",
    "set_advertising": "peripheral, on=true|false: register / unregister its advertisement "
                       "(real BlueZ: btvirt sends one report when advertising starts)",
    "push": "peripheral[, state=locked|unlocked | value=HEX[, silent=true]]: notify a value now "
            "(silent: only set it)",
    "notify_on_subscribe": "peripheral, on=true|false: lock sends its state when a central "
                           "enables notifications (each CCCD write)",
    "firmware_log": "peripheral (lock), path: log every value its firmware characteristic receives "
                    "to the file (4-byte little-endian length, then the bytes) and count them from 0",
    "start_stream": "peripheral[, rate]: band starts notifying",
    "stop_stream": "peripheral: band stops notifying",
    "set_rate": "peripheral, rate: band notifications per second",
    "set_beacon": "peripheral (beacon)[, major, minor, power]: change its iBeacon frame "
                  "(and the counter in its service data): a changed payload",
    "set_rssi": "peripheral, rssi[, noise]: RSSI base value and noise (dBm)",
    "set_pairing_method": "peripheral, method (just-works|confirmation|passkey)[, passkey]: what the peripheral "
                          "demands of the central's agent to pair (patch 26)",
    "rotate_address": "peripheral (with --lock-privacy): it takes a new resolvable private address now "
                      "(patch 27); the reply has it",
    "set_timing": "connect_timeout, supervision_timeout (seconds)",
    "set_advertising_instances": "instances: advertisements each adapter's controller sends at once "
                                 "(kept across restart_bluez; those registered stay)",
    "get": "peripheral: its state",
    "restart_bluez": "[signal=KILL|TERM]: stop bluetoothd (BlueZoo) with it, start it again, "
                     "wait for peripherals to re-register",
    "central_power": "on=true|false: power the central adapter hci0",
    "power_cycle_central": "[off_seconds]: central adapter off, then on",
    "kill_peripheral": "peripheral: SIGKILL its process",
    "start_peripheral": "peripheral: start its process again",
    "stop": "stop the bench",
    "help": "this list",
}


class CommandFailed(Exception):
    pass


class Dispatcher:
    def __init__(self, bench: Bench, request_stop: Callable[[], None]):
        self.bench = bench
        self.request_stop = request_stop
        self.lock = asyncio.Lock()

    async def handle_line(self, line: str) -> dict[str, Any]:
        rid: Any = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise CommandFailed("a command is a JSON object")
            rid = req.get("id")
            cmd = req.get("cmd")
            if not isinstance(cmd, str):
                raise CommandFailed("missing \"cmd\"")
            async with self.lock:   # commands run one at a time, in order
                result = await self.run(cmd, req)
            return {"id": rid, "ok": True, **result}
        except ValueError as e:
            return {"id": rid, "ok": False, "error": f"bad request: {e}"}
        except (CommandFailed, BenchError, BusError, RuntimeError, asyncio.TimeoutError) as e:
            return {"id": rid, "ok": False, "error": str(e) or type(e).__name__}

    def _peripheral(self, req: dict[str, Any]) -> PeripheralSpec:
        name = req.get("peripheral")
        spec = self.bench.peripherals.get(name) if isinstance(name, str) else None
        if spec is None:
            raise CommandFailed(f"unknown peripheral {name!r}; known: "
                                f"{', '.join(self.bench.peripherals)}")
        return spec

    async def run(self, cmd: str, req: dict[str, Any]) -> dict[str, Any]:
        b = self.bench
        if cmd == "ping":
            return {}
        if cmd == "help":
            return {"commands": HELP}
        if cmd == "status":
            states = {}
            for s in b.peripherals.values():
                running = s.child is not None and s.child.running
                st = await s.child.request("get", {}) if running else {}
                st.pop("id", None)
                st.pop("ok", None)
                states[s.name] = {"running": running, "in_range": s.in_range, **st}
            info = b.info()
            info.pop("event")
            return {**info, "central_powered": b.central_powered, "state": states,
                    "bluetoothd": await b.daemon_status()}
        if cmd in FORWARDED:
            spec = self._peripheral(req)
            if spec.kind not in FORWARDED[cmd]:
                raise CommandFailed(f"{cmd} is not a command of a {spec.kind}")
            if spec.child is None or not spec.child.running:
                raise CommandFailed(f"peripheral {spec.name} is not running")
            args = {k: v for k, v in req.items() if k not in ("id", "cmd", "peripheral")}
            reply = await spec.child.request(cmd, args)
            if not reply.get("ok"):
                raise CommandFailed(reply.get("error", "peripheral refused"))
            if cmd == "set_adv_name":
                spec.adv_name = reply["adv_name"]
            if cmd == "set_gap_name":
                spec.gap_name = reply["gap_name"]
            return {k: v for k, v in reply.items() if k not in ("id", "ok")}
        if cmd in ("out_of_range", "in_range"):
            spec = self._peripheral(req)
            await b.set_in_range(spec, cmd == "in_range")
            return {"peripheral": spec.name, "in_range": spec.in_range}
        if cmd in b.unsupported:
            raise CommandFailed(f"{cmd} is not available on the {b.backend} backend")
        if cmd == "set_rssi":
            spec = self._peripheral(req)
            rssi, noise = req.get("rssi"), req.get("noise", spec.noise)
            if not _int_in(rssi, -127, 20) or not _int_in(noise, 0, 40):
                raise CommandFailed("rssi must be an integer in [-127, 20], noise in [0, 40]")
            spec.rssi, spec.noise = rssi, noise
            await b.client.zoo("SetRSSI", "snn", [spec.address, rssi, noise])
            return {"peripheral": spec.name, "rssi": rssi, "noise": noise}
        if cmd == "set_pairing_method":
            spec = self._peripheral(req)
            method, passkey = req.get("method"), req.get("passkey", 0)
            if method not in ("just-works", "confirmation", "passkey") or not _int_in(passkey, 0, 999999):
                raise CommandFailed("method must be just-works, confirmation or passkey; passkey an integer in [0, 999999]")
            await b.client.zoo("SetPairingMethod", "ssu", [spec.address, method, passkey])
            return {"peripheral": spec.name, "method": method, "passkey": passkey}
        if cmd == "rotate_address":
            spec = self._peripheral(req)
            rpa = (await b.client.zoo("RotateAddress", "s", [spec.address]))[0]
            if not rpa:
                raise CommandFailed(f"{spec.name} has no privacy (start the bench with --lock-privacy)")
            return {"peripheral": spec.name, "address": rpa}
        if cmd == "set_timing":
            ct = req.get("connect_timeout", b.opts.connect_timeout)
            st = req.get("supervision_timeout", b.opts.supervision_timeout)
            if not _num_in(ct, 0, 120) or not _num_in(st, 0, 60):
                raise CommandFailed("connect_timeout in [0, 120] s, supervision_timeout in [0, 60] s")
            b.opts.connect_timeout, b.opts.supervision_timeout = float(ct), float(st)
            await b.client.zoo("SetTiming", "dd", [float(ct), float(st)])
            return {"connect_timeout": float(ct), "supervision_timeout": float(st)}
        if cmd == "set_advertising_instances":
            n = req.get("instances")
            if not _int_in(n, 0, 255):
                raise CommandFailed("instances must be an integer in [0, 255]")
            b.opts.advertising_instances = n
            await b.client.zoo("SetAdvertisingInstances", "u", [n])
            return {"advertising_instances": n}
        if cmd == "restart_bluez":
            how = req.get("signal", "KILL")
            if how not in ("KILL", "TERM"):
                raise CommandFailed("signal must be KILL or TERM")
            old = b.zoo.pid if b.zoo else None
            # Set when the old daemon had already exited (crashed) before this restart.
            old_rc = b.zoo.proc.returncode if b.zoo and b.zoo.proc else None
            await b.restart_zoo(how)
            # No pid where bluetoothd is systemd's (the gateway backend).
            return {"old_pid": old, "old_returncode": old_rc, "pid": b.zoo.pid if b.zoo else None,
                    "signal": how}
        if cmd == "central_power":
            on = req.get("on")
            if not isinstance(on, bool):
                raise CommandFailed("on must be true or false")
            b.central_powered = on
            await b.client.set_powered("hci0", on)
            return {"on": on}
        if cmd == "power_cycle_central":
            off = req.get("off_seconds", 0.2)
            if not _num_in(off, 0, 60):
                raise CommandFailed("off_seconds must be in [0, 60]")
            await b.client.set_powered("hci0", False)
            await asyncio.sleep(float(off))
            await b.client.set_powered("hci0", True)
            b.central_powered = True
            return {"off_seconds": off}
        if cmd == "kill_peripheral":
            spec = self._peripheral(req)
            if spec.child is None or not spec.child.running:
                raise CommandFailed(f"peripheral {spec.name} is not running")
            pid = spec.child.pid
            spec.child.kill()
            await spec.child.stop()
            return {"peripheral": spec.name, "pid": pid}
        if cmd == "start_peripheral":
            spec = self._peripheral(req)
            await b.start_peripheral(spec)
            return {"peripheral": spec.name, "pid": spec.child.pid}
        if cmd == "stop":
            self.request_stop()
            return {}
        raise CommandFailed(f"unknown command {cmd!r} (try \"help\")")


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _num_in(v: Any, lo: float, hi: float) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi
