"""Figures of relinkd's peripheral role (issue 23), from one run on the mock
bench, beside the floor:

1. Notifications per second from a program through relinkd to a subscribed
   remote central (`UpdateValue`, one call after another, waiting for
   `ready-to-update` after each `UpdateQueueFull`), beside the floor: a
   plain program whose GATT server is registered straight with bluetoothd
   (BlueZoo), emitting `PropertiesChanged(Value)` as fast as it can. And the
   latency of one value (sent, then received by the central, one at a
   time) each way: relinkd's minus the floor's is what relinkd adds.
2. relinkd restart (SIGKILL, then started again) until bluetoothd has
   every identifier's application and advertisement registered again, for
   1, 4 and 16 identifiers (no program attached).

  .venv/bin/python bench/relink/peripheral_bench.py --relinkd .build/release/relinkd [--count 2000] [--rounds 3] [--reps 5]

Every process started here is stopped at the end (and dies with this
process: PR_SET_PDEATHSIG)."""

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
for p in (os.path.join(BENCH, "e2e", "tests"), os.path.join(BENCH, "tests"), BENCH):
    sys.path.insert(0, p)

from dbus_fast import Message, MessageType  # noqa: E402

from benchproc import BenchProcess  # noqa: E402
from e2e_harness import Caller, die_with_parent, wait_until  # noqa: E402
from pbench_fixtures import HUB_ADVERTISEMENT, HUB_SERVICE, RELINKD_ADDRESS, SERVICE, STREAM  # noqa: E402
from relinkbench.peripheral.gatt import Advertisement, Characteristic, Service  # noqa: E402
from remote_central import PeripheralProgram, RemoteCentral  # noqa: E402

FLOOR_SERVICE = "8e7f3b00-4b2c-4d1e-9a3f-72656c696e6b"
FLOOR_STREAM = "8e7f3b03-4b2c-4d1e-9a3f-72656c696e6b"
FLOOR_NAME = "Floor-1"
# Values the floor program keeps on their way at once (relinkd's update window is 16).
WINDOW = 64
# UpdateValue calls the pipelined program keeps on their way at once.
PIPELINE = 16
# Values per UpdateValues call (relinkd takes at most 16 at once).
BATCH = 16


class TimedCentral(RemoteCentral):
    """The remote central, noting when each notified value arrived."""

    def __init__(self, bus: str, adapter: str):
        super().__init__(bus, adapter)
        self.arrivals: dict[str, list[tuple[float, bytes]]] = {}
        self.cond = threading.Condition()

        def on(msg: Message) -> None:
            if msg.message_type == MessageType.SIGNAL and msg.member == "PropertiesChanged" and msg.body \
                    and msg.body[0] == "org.bluez.GattCharacteristic1" and "Value" in msg.body[1]:
                with self.cond:
                    self.arrivals.setdefault(msg.path, []).append((time.perf_counter(), bytes(msg.body[1]["Value"].value)))
                    self.cond.notify_all()
        self.bus.add_message_handler(on)

    def received(self, path: str) -> int:
        with self.cond:
            return len(self.arrivals.get(path, []))

    def wait_count(self, path: str, n: int, timeout: float) -> float:
        """Waits until n values arrived; the arrival time of the n-th."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.arrivals.get(path, [])) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.arrivals.get(path, []))} of {n} values arrived at {path}")
                self.cond.wait(left)
            return self.arrivals[path][n - 1][0]


class FloorProgram(Caller):
    """A plain GATT server registered straight with bluetoothd on `adapter`."""

    def __init__(self, bus: str, adapter: str):
        super().__init__(bus)
        root = "/org/example/floor"
        self.service = Service(f"{root}/app/service0", FLOOR_SERVICE)
        self.char = Characteristic(f"{root}/app/service0/char0", self.service, FLOOR_STREAM, ["notify"])
        self.adv = Advertisement(FLOOR_NAME, [FLOOR_SERVICE], {}, {})

        async def setup() -> None:
            for path, obj in ((self.service.path, self.service), (self.char.path, self.char), (f"{root}/adv0", self.adv)):
                self.bus.export(path, obj)
            for member, path in (("RegisterApplication", f"{root}/app"), ("RegisterAdvertisement", f"{root}/adv0")):
                iface = "org.bluez.GattManager1" if member == "RegisterApplication" else "org.bluez.LEAdvertisingManager1"
                reply = await self.bus.call(Message(destination="org.bluez", path=f"/org/bluez/{adapter}", interface=iface,
                                                    member=member, signature="oa{sv}", body=[path, {}]))
                if reply.message_type == MessageType.ERROR:
                    raise RuntimeError(f"{member}: {reply.error_name} {reply.body}")
        self._run(setup(), 20)

    def send(self, values: list[bytes], delivered=None) -> float:
        """Emits every value as fast as the loop can, with at most WINDOW on
        their way (sent, not yet at the central: `delivered()` counts them);
        returns the first send time. (dbus-fast drops its connection when it
        writes into a full socket, which an unbounded burst reaches.)"""
        async def go() -> float:
            start = delivered() if delivered else 0
            t0 = time.perf_counter()
            for n, v in enumerate(values):
                while delivered is not None and n - (delivered() - start) >= WINDOW:
                    await asyncio.sleep(0.0002)
                self.char.set_value(v)
                await asyncio.sleep(0)
            return t0
        return self._run(go(), 300)


def watch_ready(program: PeripheralProgram):
    """An event set at each ready-to-update of the program (call in its loop),
    and the function that stops watching."""
    ready = asyncio.Event()

    def on(msg: Message) -> None:
        if msg.member == "Event" and msg.body and msg.body[1] == "ready-to-update":
            ready.set()
    program.bus.add_message_handler(on)
    return ready, lambda: program.bus.remove_message_handler(on)


def update_calls(program: PeripheralProgram, values: list[bytes], in_flight: int = 1) -> tuple[float, int]:
    """UpdateValue for each value, `in_flight` calls at a time (1: one call
    after another, the order kept); after an UpdateQueueFull, wait for
    ready-to-update and send the value again. Returns the first send time
    and the number of refusals."""
    async def go() -> tuple[float, int]:
        ready, stop_watching = watch_ready(program)
        refused = 0
        gate = asyncio.Semaphore(in_flight)

        async def one(v: bytes) -> None:
            nonlocal refused
            async with gate:
                while True:
                    ready.clear()
                    reply = await program.bus.call(Message(destination="org.relink", path=program.path,
                                                           interface="org.relink.PeripheralManager1", member="UpdateValue",
                                                           signature="ssay", body=[SERVICE, STREAM, v]))
                    if reply.message_type != MessageType.ERROR:
                        return
                    if reply.error_name != "org.relink.Error.UpdateQueueFull":
                        raise RuntimeError(f"UpdateValue: {reply.error_name} {reply.body}")
                    refused += 1
                    try:
                        await asyncio.wait_for(ready.wait(), 1)
                    except asyncio.TimeoutError:
                        pass   # another caller took the ready event: try again
        t0 = time.perf_counter()
        try:
            if in_flight == 1:
                for v in values:
                    await one(v)
            else:
                await asyncio.gather(*(one(v) for v in values))
        finally:
            stop_watching()
        return t0, refused
    return program._run(go(), 600)


def update_batches(program: PeripheralProgram, values: list[bytes]) -> tuple[float, int]:
    """UpdateValues with up to BATCH values per call, one call after another
    (the order kept); the values relinkd did not take go again after
    ready-to-update. Returns the first send time and the number of calls
    that were not taken whole."""
    async def go() -> tuple[float, int]:
        ready, stop_watching = watch_ready(program)
        refused, n = 0, 0
        t0 = time.perf_counter()
        try:
            while n < len(values):
                ready.clear()
                batch = values[n:n + BATCH]
                reply = await program.bus.call(Message(destination="org.relink", path=program.path,
                                                       interface="org.relink.PeripheralManager1", member="UpdateValues",
                                                       signature="ssaay", body=[SERVICE, STREAM, batch]))
                if reply.message_type == MessageType.ERROR and reply.error_name != "org.relink.Error.UpdateQueueFull":
                    raise RuntimeError(f"UpdateValues: {reply.error_name} {reply.body}")
                taken = 0 if reply.message_type == MessageType.ERROR else reply.body[0]
                n += taken
                if taken < len(batch):
                    refused += 1
                    try:
                        await asyncio.wait_for(ready.wait(), 1)
                    except asyncio.TimeoutError:
                        pass
        finally:
            stop_watching()
        return t0, refused
    return program._run(go(), 600)


def has_update_values(program: PeripheralProgram) -> bool:
    """Whether this relinkd has UpdateValues (older ones answer UnknownMethod)."""
    error = program.error_of(program.path, "org.relink.PeripheralManager1", "UpdateValues", "ssaay",
                             [SERVICE, STREAM, [b"\x00"]], destination="org.relink")
    return error is None


def values(count: int, tag: int) -> list[bytes]:
    return [bytes([tag]) + i.to_bytes(4, "little") for i in range(count)]


def check_order(central: TimedCentral, path: str, start: int, sent: list[bytes], ordered: bool = True) -> int:
    """How many of the sent values are missing, doubled or (when `ordered`) out of place."""
    with central.cond:
        got = [v for _, v in central.arrivals[path][start:start + len(sent)]]
    if not ordered:
        got, sent = sorted(got), sorted(sent)
    return sum(1 for a, b in zip(got, sent) if a != b) + abs(len(got) - len(sent))


def latency(central: TimedCentral, path: str, send, n: int) -> list[float]:
    """One value at a time: from its send until the central has it (ms)."""
    out = []
    for i in range(n):
        before = central.received(path)
        t0 = time.perf_counter()
        send(bytes([0xEE]) + i.to_bytes(4, "little"))
        t1 = central.wait_count(path, before + 1, 10)
        out.append((t1 - t0) * 1000)
    return out


class RelinkdProc:
    def __init__(self, binary: str, bus: str, state: str, log: str):
        self.binary, self.bus, self.state, self.log = binary, bus, state, log
        self.proc: subprocess.Popen | None = None

    def spawn(self) -> float:
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "DBUS_SESSION_BUS_ADDRESS")}
        with open(self.log, "ab") as log:
            t = time.perf_counter()
            self.proc = subprocess.Popen([self.binary, "--bus-address", self.bus, "--state-directory", self.state,
                                          "--log-destination", "stderr", "--log-level", "notice"],
                                         stdout=log, stderr=log, env=env, preexec_fn=die_with_parent)
        return t

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)


def zoo_state(c: Caller) -> dict:
    return json.loads(c.call("/org/relinkbench", "org.relinkbench.Zoo1", "GetState", destination="org.bluez")[0])


def hci0_registrations(c: Caller) -> tuple[int, int]:
    a = zoo_state(c)["adapters"]["/org/bluez/hci0"]
    return a["applications"], a["advertisements"]


def wait_manager(c: Caller, timeout: float = 30) -> None:
    wait_until(lambda: c.error_of("/org/relink", "org.freedesktop.DBus.Properties", "Get", "ss",
                                  ["org.relink.Manager1", "Version"], timeout=2) is None, timeout, "relinkd's Manager1", 0.005)


def throughput_section(args, bench: BenchProcess, relinkd: RelinkdProc, probe: Caller) -> list[str]:
    relinkd.spawn()
    wait_manager(probe)
    program = PeripheralProgram(bench.bus, "org.example.hub")
    program.publish(HUB_SERVICE)
    program.advertise(HUB_ADVERTISEMENT)
    floor = FloorProgram(bench.bus, bench.peripherals["floor"]["adapter"])
    central = TimedCentral(bench.bus, bench.peripherals["remote"]["adapter"])
    try:
        central.discover(HUB_ADVERTISEMENT["localName"])
        central.connect(RELINKD_ADDRESS)
        floor_address = bench.peripherals["floor"]["address"]
        central.discover(FLOOR_NAME)
        central.connect(floor_address)
        hub_path = wait_until(lambda: _path(central, RELINKD_ADDRESS, SERVICE, STREAM), 15, "the hub's stream")
        floor_path = wait_until(lambda: _path(central, floor_address, FLOOR_SERVICE, FLOOR_STREAM), 15, "the floor's stream")
        central.start_notify(hub_path)
        central.start_notify(floor_path)
        program.wait_event("subscribed")

        sides = ("relinkd", "pipelined", "batched", "floor") if has_update_values(program) else ("relinkd", "pipelined", "floor")
        wait_until(lambda: central.received(hub_path) >= (1 if "batched" in sides else 0), 15, "the probe's value")
        rows = {side: [] for side in sides}
        lost = {side: 0 for side in sides}
        refusals = {"relinkd": [], "pipelined": [], "batched": []}
        for r in range(args.rounds):
            for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                path = floor_path if side == "floor" else hub_path
                sent = values(args.count, r)
                start = central.received(path)
                if side == "floor":
                    t0 = floor.send(sent, lambda: central.received(floor_path))
                elif side == "batched":
                    t0, refused = update_batches(program, sent)
                    refusals[side].append(refused)
                else:
                    t0, refused = update_calls(program, sent, 1 if side == "relinkd" else PIPELINE)
                    refusals[side].append(refused)
                t1 = central.wait_count(path, start + len(sent), 120)
                rows[side].append(len(sent) / (t1 - t0))
                lost[side] += check_order(central, path, start, sent, ordered=side != "pipelined")
        lat = {"relinkd": latency(central, hub_path, lambda v: program.update(SERVICE, STREAM, v), args.latency),
               "floor": latency(central, floor_path, lambda v: floor.send([v]), args.latency)}
    finally:
        central.close()
        floor.close()
        program.close()
        relinkd.kill9()

    def med(xs):
        return f"{statistics.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})"

    def pct(xs, q):
        return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]
    out = [f"notifications: {args.count} values x {args.rounds} rounds per side, rotating which goes first",
           "| side | notifications/s, median (min-max) | lost or out of order |", "|---|---|---|",
           f"| relinkd, `UpdateValue` then bluetoothd | {med(rows['relinkd'])} | {lost['relinkd']} of {args.count * args.rounds} |",
           f"| relinkd, {PIPELINE} `UpdateValue` calls on their way at once (order not kept) | {med(rows['pipelined'])} | {lost['pipelined']} of {args.count * args.rounds} (lost or doubled) |",
           (f"| relinkd, `UpdateValues` with {BATCH} values per call | {med(rows['batched'])} | {lost['batched']} of {args.count * args.rounds} |"
            if rows.get("batched") else "| relinkd, `UpdateValues` | (not in this relinkd) | |"),
           f"| floor, `PropertiesChanged` straight to bluetoothd ({WINDOW} on their way at most) | {med(rows['floor'])} | {lost['floor']} of {args.count * args.rounds} |",
           f"relinkd's UpdateQueueFull refusals per round: one call at a time {refusals['relinkd']}, "
           f"{PIPELINE} at once {refusals['pipelined']}, batches not taken whole {refusals['batched']}",
           "",
           f"latency of one value, send to the central's PropertiesChanged, {args.latency} values one at a time (ms)",
           "| side | median | p90 | max |", "|---|---|---|---|"]
    for side in ("relinkd", "floor"):
        xs = lat[side]
        out.append(f"| {side} | {statistics.median(xs):.2f} | {pct(xs, 0.9):.2f} | {max(xs):.2f} |")
    out.append(f"added by relinkd (median): {statistics.median(lat['relinkd']) - statistics.median(lat['floor']):.2f} ms")
    return out


def _path(central: RemoteCentral, address: str, service: str, characteristic: str):
    try:
        return central.char_path(address, service, characteristic)
    except AssertionError:
        return None


def restart_section(args, bench: BenchProcess, work: str, probe: Caller) -> list[str]:
    out = [f"relinkd SIGKILL then started again, until bluetoothd (BlueZoo) has every application and advertisement "
           f"again; {args.reps} restarts per row (ms, median (min-max))",
           "| identifiers | advertising | Manager1 on the bus | applications and advertisements registered |", "|---|---|---|---|"]
    for n in (1, 4, 16):
        state = os.path.join(work, f"state-{n}")
        relinkd = RelinkdProc(args.relinkd, bench.bus, state, os.path.join(work, f"relinkd-{n}.log"))
        relinkd.spawn()
        wait_manager(probe)
        advertising = 0
        programs = [PeripheralProgram(bench.bus, f"org.example.hub{i}") for i in range(n)]
        for i, p in enumerate(programs):
            p.publish(HUB_SERVICE)
            try:
                p.advertise({**HUB_ADVERTISEMENT, "localName": f"Hub-{i}"})
                advertising += 1
            except Exception as e:  # BlueZoo has 15 advertising instances per adapter (bench patch 24)
                if "AdvertisingLimitReached" not in str(e) and "NotSupported" not in str(e):  # (NotSupported: an older relinkd)
                    raise
        for p in programs:
            p.close()
        wait_until(lambda: hci0_registrations(probe) == (n, advertising), 20, "the first registrations")
        manager, registered = [], []
        for _ in range(args.reps):
            relinkd.kill9()
            wait_until(lambda: hci0_registrations(probe) == (0, 0), 20, "BlueZoo dropping the dead relinkd's registrations", 0.005)
            t0 = relinkd.spawn()
            got = {}

            def done() -> bool:
                if "manager" not in got and probe.error_of("/org/relink", "org.freedesktop.DBus.Properties", "Get", "ss",
                                                           ["org.relink.Manager1", "Version"], timeout=2) is None:
                    got["manager"] = time.perf_counter()
                if "registered" not in got and hci0_registrations(probe) == (n, advertising):
                    got["registered"] = time.perf_counter()
                return len(got) == 2
            wait_until(done, 60, f"{n} identifiers registered again", 0.002)
            manager.append((got["manager"] - t0) * 1000)
            registered.append((got["registered"] - t0) * 1000)
        relinkd.kill9()

        def med(xs):
            return f"{statistics.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})"
        out.append(f"| {n} | {advertising} | {med(manager)} | {med(registered)} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relinkd", required=True)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="relink-pbench-figures-")
    bench = BenchProcess("--remote-central", "remote", "--remote-central", "floor")
    probe = Caller(bench.bus)
    try:
        print(f"machine: {os.cpu_count()} cores, load average {open('/proc/loadavg').read().split()[:3]}", flush=True)
        relinkd = RelinkdProc(args.relinkd, bench.bus, os.path.join(work, "state"), os.path.join(work, "relinkd.log"))
        for line in throughput_section(args, bench, relinkd, probe):
            print(line, flush=True)
        print(flush=True)
        for line in restart_section(args, bench, work, probe):
            print(line, flush=True)
        print(f"machine after: load average {open('/proc/loadavg').read().split()[:3]}", flush=True)
    finally:
        probe.close()
        bench.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
