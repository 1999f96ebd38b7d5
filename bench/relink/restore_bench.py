"""Restoration benchmark (issue 6): relinkd against a bleak-retry-connector
script, on one simulated bench.

  .venv/bin/python bench/relink/restore_bench.py --relinkd .build/release/relinkd [--reps 9]
  .venv/bin/python bench/relink/restore_bench.py --backend bluez   # real bluetoothd, in the VM

Measures, for each contender:
  * back in range: the lock (connected, subscribed) goes out of range; once the
    client has seen the link drop and the lock has stayed away --away seconds,
    it comes back in range (clock starts just before `in_range` is sent); a
    fresh probe value is pushed every P ms until the first one reaches the
    client. One link, --reps-in-range times for each P in --probe-ms
    (default 2,20: with 2 ms the figure shows when values flow again, to
    within the bench's push rate; with 20 ms both contenders are usually
    armed before the second probe, and it shows the delivery hop). Also
    reported: the part after BlueZ reported the link up (`Connected`, seen
    on the bench's own bus connection), which is the contender's own work;
    the part before is the bench's (BlueZoo completes the pending Connect);
    the part after the first probe bluetoothd put on the bus (it delivers
    to every armed notify session at once); and how many probes it put
    there before the one that reached the client: values dropped on the
    way (bleak drops those that come before its start_notify callback is
    registered again).
  * state sent once: the lock sends its state once, as notifications are
    enabled again at the reconnection (many locks do), and nothing more;
    while it is away its state changes (silently) to a fresh probe. Back in
    range -> that value at the client, or missed (lost for good: the lock
    sends it again only at the next reconnection). --once-reps samples.
  * flapping (--flap-cycles, 0 by default): a device at the edge of range,
    away 0.5-2 s and back 1-5 s each cycle (one seeded schedule for all),
    sending a value every 50 ms throughout: back in range -> its first value
    at the client, cycles with none, and values bluetoothd put on the bus
    that never reached the client (lost).
  * restore: N links connected and subscribed (N = --links, default 1,2,4,8);
    the client process is SIGKILLed (BlueZ keeps the links, as it does when
    a process dies); the clock starts just before the new process is spawned;
    probes are pushed to every link that has not delivered one yet until all
    have. --reps times per N.

"Reaches the client": for relinkd, by default (--relinkd-client process) the
client is a process of its own (relinkd_client.py), as the peer's is; it
attaches with Manager1.Register, as a real client does (again at once after
each restart, when relinkd takes its bus name), and a value counts when its
unicast Central1.Event signal has been read and decoded. With
--relinkd-client signal the same client runs in this process, sharing its
event loop with the prober and the bus watch (the arrangement before
session 8, kept for comparison); with --relinkd-client poll the value
appears in Control1.Events, polled every --poll-ms. For the bleak script,
its notify callback stamps the value. All stamp CLOCK_MONOTONIC (shared by
processes).

Prints a table (median, min, max; for back in range also the mean and the
90th percentile) and a linear fit of restore time against N. A contender
that gets no value within --timeout (or is refused) fails that turn: the
failure is a row of the table and its reason is printed below it, the run
goes on with the others and exits with status 3.

--backend bluez runs the same on real bluetoothd 5.66 (bench/realbluez):
run on the host, this script boots the VM (run-vm, one btvirt controller per
lock plus hci0) and runs itself inside it with the same arguments, where
run-bench --backend bluez plays the locks on their own controllers; relinkd
runs as the relink user (the system bus's policy, systemd/org.relink.conf).
Its logs go to .cache/realbluez/logs/restore-bench/.
Every process started here is stopped on exit, also on failure or SIGTERM,
and has PR_SET_PDEATHSIG=SIGKILL in case this process is killed.
"""

import argparse
import asyncio
import ctypes
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relinkd_client  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
IDENTIFIER = "bench"
CLIENT_MODES = ("process", "signal", "poll")
IN_GUEST = os.environ.get("RELINK_REALBLUEZ_GUEST") == "1"  # set by bench/realbluez/run-vm
DEBUG = bool(os.environ.get("RELINK_BENCH_DEBUG"))


def die_with_parent() -> None:
    """PR_SET_PDEATHSIG(SIGKILL) in the child, so nothing outlives this process."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def probe_hex(link: int, seq: int) -> str:
    return f"p{link}.{seq}".encode().hex()


def parse_probe(raw: bytes) -> tuple[int, int] | None:
    try:
        text = raw.decode()
        if not text.startswith("p"):
            return None
        link, seq = text[1:].split(".")
        return int(link), int(seq)
    except (UnicodeDecodeError, ValueError):
        return None


async def quiet_disconnect(bus: MessageBus) -> None:
    bus.disconnect()
    try:
        await asyncio.wait_for(bus.wait_for_disconnect(), 2)
    except (asyncio.TimeoutError, EOFError, OSError):
        pass


class BenchFailure(Exception):
    pass


class Bench:
    """bench/run-bench with its control socket (one connection per peripheral
    for pushes, so pushes to different locks go in parallel). `backend`:
    run-bench's, mock (BlueZoo on a private bus) or bluez (real bluetoothd
    on the VM's system bus, bench/realbluez). `kind`: the peripherals'
    (lock, or band for stream_bench.py, which names them band0...; the list
    is `locks` whatever the kind); `options`: more of run-bench's
    (``--band-rate 20``)."""

    def __init__(self, locks: int, connect_timeout: float, work: str, backend: str = "mock",
                 kind: str = "lock", options: tuple[str, ...] = ()):
        self.locks = [f"{kind}{i}" for i in range(locks)]
        self.kind = kind
        self.options = options
        self.connect_timeout = connect_timeout
        self.work = work
        self.backend = backend
        self.proc: asyncio.subprocess.Process | None = None
        self.info: dict = {}
        self.conns: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.Lock]] = {}

    async def start(self) -> None:
        args = [os.path.join(ROOT, "bench", "run-bench"), "--backend", self.backend,
                "--connect-timeout", str(self.connect_timeout), *self.options]
        for name in self.locks:
            args += [f"--{self.kind}", name]
        self.log = open(os.path.join(self.work, "bench.log"), "wb")
        self.proc = await asyncio.create_subprocess_exec(
            *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self.log,
            preexec_fn=die_with_parent, limit=16 * 1024 * 1024)
        # Real bluetoothd under software emulation starts in tens of seconds.
        line = await asyncio.wait_for(self.proc.stdout.readline(), 120 if self.backend == "mock" else 300)
        self.info = json.loads(line or b'{"event":"error","error":"no ready line"}')
        if self.info.get("event") != "ready":
            raise BenchFailure(f"bench did not start: {self.info}")

    @property
    def bus(self) -> str:
        return self.info["bus"]

    def address(self, name: str) -> str:
        return self.info["peripherals"][name]["address"]

    async def _conn(self, key: str):
        if key not in self.conns:
            # A status reply names every peripheral: with 64 locks it is far
            # longer than asyncio's default 64 KiB line limit.
            r, w = await asyncio.open_unix_connection(os.path.join(self.info["dir"], "control.sock"),
                                                      limit=64 * 1024 * 1024)
            self.conns[key] = (r, w, asyncio.Lock())
        return self.conns[key]

    async def cmd(self, cmd: str, channel: str = "main", **args) -> dict:
        r, w, lock = await self._conn(channel)
        async with lock:
            w.write((json.dumps({"id": 1, "cmd": cmd, **args}) + "\n").encode())
            await w.drain()
            reply = json.loads(await asyncio.wait_for(r.readline(), 60))
        if not reply.get("ok"):
            raise BenchFailure(f"{cmd} {args}: {reply}")
        return reply

    async def push(self, link: int, seq: int) -> None:
        name = self.locks[link]
        await self.cmd("push", channel=name, peripheral=name, value=probe_hex(link, seq))

    async def stop(self) -> None:
        for _, w, _ in self.conns.values():
            w.close()
        if self.proc and self.proc.returncode is None:
            self.proc.stdin.close()  # EOF stops the bench and removes its directory
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


@dataclass
class Arrivals:
    """What the client reported: probe values (link, seq, t) and link drops."""
    values: asyncio.Queue = field(default_factory=asyncio.Queue)
    drops: asyncio.Queue = field(default_factory=asyncio.Queue)

    def clear(self) -> None:
        for q in (self.values, self.drops):
            while not q.empty():
                q.get_nowait()


class Figures:
    """One contender's samples of one measure (`key`) in `results`:
    ``fig[suffix]`` is the list under key + suffix, filled as samples are
    taken. A failure (no value within the bound, the contender or the bench
    refusing) is itself a result: counted under key + "_failed", its reason
    kept under "errors", and the samples before it stay."""

    def __init__(self, results: dict, name: str, key: str):
        self.res = results.setdefault(name, {})
        self.key = key

    def __getitem__(self, suffix: str) -> list:
        return self.res.setdefault(self.key + suffix, [])

    def fail(self, reason: str) -> None:
        self["_failed"].append(1)
        self.res.setdefault("errors", []).append(f"{self.key}: {reason}")


class Contender:
    name = ""

    def __init__(self, bench: Bench, work: str):
        self.bench = bench
        self.work = work
        self.arrivals = Arrivals()
        self.proc: asyncio.subprocess.Process | None = None
        self.links: list[int] = []

    async def spawn(self) -> float:
        raise NotImplementedError

    async def kill(self) -> None:
        await self.stop(self.proc)
        self.proc = None

    @staticmethod
    async def stop(proc: asyncio.subprocess.Process | None, reader: asyncio.Task | None = None) -> None:
        """SIGKILLs a process started here if it still runs and waits for
        it, then for the task reading its lines (which ends at its EOF)."""
        if proc and proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        if reader:
            await reader

    async def spawn_script(self, script: str, *args: str, log: str,
                           env: dict[str, str] | None = None, stdin: int = asyncio.subprocess.DEVNULL
                           ) -> asyncio.subprocess.Process:
        """A client script of this directory: JSON lines on its stdout
        (``read_lines``), its stderr appended to `log` in the work directory."""
        with open(os.path.join(self.work, log), "ab") as f:
            return await asyncio.create_subprocess_exec(
                sys.executable, os.path.join(HERE, script), *args, stdin=stdin,
                stdout=asyncio.subprocess.PIPE, stderr=f, env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})),
                preexec_fn=die_with_parent)

    async def read_lines(self, proc: asyncio.subprocess.Process, other: Callable[[dict], None]) -> None:
        """A client script's lines, each to ``take``."""
        while line := await proc.stdout.readline():
            self.take(json.loads(line), other)

    def take(self, msg: dict, other: Callable[[dict], None]) -> None:
        """A value (stamped by the client) to the arrivals, anything else
        the client reports to `other`."""
        if msg["ev"] == "value":
            probe = parse_probe(bytes.fromhex(msg["hex"]))
            if probe:
                self.arrivals.values.put_nowait((*probe, msg["t"]))
        else:
            other(msg)

    def log_tail(self) -> str:
        try:
            with open(self.logpath, "rb") as f:
                return f.read()[-3000:].decode("utf-8", "replace")
        except OSError:
            return ""


central_path = relinkd_client.central_path


class Relinkd(Contender):
    name = "relinkd"

    def __init__(self, bench: Bench, work: str, binary: str, poll_ms: float, client: str = "process"):
        super().__init__(bench, work)
        self.binary = binary
        self.poll = poll_ms / 1000
        self.client = client
        self.log_level = "info"
        self.in_bench: asyncio.Task | None = None  # the client, with --relinkd-client signal
        self.client_bus: MessageBus | None = None
        self.state = tempfile.mkdtemp(prefix="state-", dir=work)
        self.logpath = os.path.join(work, "relinkd.log")
        self.bus: MessageBus | None = None
        self.after = 0
        self.poller: asyncio.Task | None = None
        self.client_proc: asyncio.subprocess.Process | None = None
        self.client_reader: asyncio.Task | None = None
        self.attached = asyncio.Event()

    async def call(self, member: str, signature: str = "", body: list | None = None):
        reply = await self.bus.call(Message(destination="org.relink", path="/org/relink/control",
                                            interface="org.relink.Control1", member=member,
                                            signature=signature, body=body or []))
        if reply.message_type == MessageType.ERROR:
            raise BenchFailure(f"{member}: {reply.error_name} {reply.body}")
        return reply.body

    async def connect_bus(self) -> None:
        if self.bus is not None:
            return
        self.bus = await MessageBus(bus_address=self.bench.bus, bus_type=BusType.SYSTEM).connect()

    def _arrived(self, kind: str, payload: str, t: float) -> None:
        """An event read by polling at t."""
        if kind == "value-notified":
            value = relinkd_client.value_of(payload)
            probe = parse_probe(value) if value is not None else None
            if probe:
                self.arrivals.values.put_nowait((*probe, t))
        elif kind == "disconnected":
            self.arrivals.drops.put_nowait(payload)

    def as_its_user(self) -> list[str]:
        """On the real system bus (bluez backend) only the relink user may own
        org.relink (systemd/org.relink.conf): relinkd runs as that user with
        its state directory its own, as its unit runs it on a gateway. A
        parent-death signal is cleared by the change of user, so setpriv
        sets it again. The mock's private bus lets anyone own any name."""
        if self.bench.backend != "bluez":
            return []
        shutil.chown(self.state, "relink", "relink")
        os.chmod(self.work, 0o711)  # mkdtemp's 0700 would keep relink out of its state directory
        return ["setpriv", "--reuid=relink", "--regid=relink", "--clear-groups", "--pdeathsig=SIGKILL"]

    async def spawn(self) -> float:
        await self.connect_bus()
        log = open(self.logpath, "ab")
        prefix = self.as_its_user()
        t0 = time.monotonic()
        self.proc = await asyncio.create_subprocess_exec(
            *prefix, self.binary, "--bus-address", self.bench.bus, "--state-directory", self.state,
            "--log-destination", "stderr", "--log-level", self.log_level, stdin=asyncio.subprocess.DEVNULL,
            stdout=log, stderr=log, preexec_fn=die_with_parent,
            env=dict(os.environ, RELINK_CONTROL_INTERFACE="1"))  # its test interface, Control1
        log.close()
        if self.client == "process":
            if self.client_proc is None:
                await self._spawn_client()
        elif self.client == "signal":
            if self.in_bench is None:
                # relinkd_client.py's client, in this process: it shares the
                # event loop with the prober and the bus watch.
                self.client_bus = await MessageBus(bus_address=self.bench.bus, bus_type=BusType.SYSTEM).connect()
                client = relinkd_client.Client(self.client_bus, IDENTIFIER,
                                               sink=lambda ev, **f: self.take({"ev": ev, **f}, self._on_client_line))
                self.in_bench = asyncio.create_task(client.run())
        elif self.poller is None:
            self.poller = asyncio.create_task(self._poll())
        return t0

    async def _spawn_client(self) -> None:
        """The client in a process of its own (relinkd_client.py), as the
        peer's is: it stays up across relinkd's restarts and re-attaches."""
        self.client_proc = await self.spawn_script("relinkd_client.py", "--bus", self.bench.bus,
                                                   "--identifier", IDENTIFIER, log="relinkd-client.log")
        self.client_reader = asyncio.create_task(self.read_lines(self.client_proc, self._on_client_line))

    def _on_client_line(self, msg: dict) -> None:
        if msg["ev"] == "disconnected":
            self.arrivals.drops.put_nowait(msg["payload"])
        elif msg["ev"] == "attached":
            self.attached.set()

    async def wait_up(self) -> None:
        for _ in range(300):
            try:
                await self.call("Status")
                return
            except BenchFailure:
                await asyncio.sleep(0.05)
        raise BenchFailure("relinkd did not come up:\n" + self.log_tail())

    async def setup(self, links: list[int]) -> None:
        """Fresh relinkd: one identifier, a pending-until-cancelled connection
        and a subscription to the lock state per link."""
        self.links = links
        self.attached.clear()
        await self.spawn()
        await self.wait_up()
        await self.call("Register", "s", [IDENTIFIER])
        if self.client != "poll":
            try:
                await asyncio.wait_for(self.attached.wait(), 30)
            except asyncio.TimeoutError:
                raise BenchFailure("the relinkd client did not attach:\n" + self.log_tail()) from None
        for link in links:
            address = self.bench.address(self.bench.locks[link])
            await self.call("Connect", "ssa{sv}", [IDENTIFIER, address,
                                                    {"pending_until_cancelled": Variant("b", True)}])
            await self.call("Subscribe", "ssss", [IDENTIFIER, address, LOCK_SERVICE, LOCK_STATE])

    async def _poll(self) -> None:
        """Events, polled: a value counts when a client could have read it."""
        while True:
            try:
                (events,) = await self.call("Events", "st", [IDENTIFIER, self.after])
            except BenchFailure:
                events = []  # relinkd not (yet) up
            t = time.monotonic()
            for seq, kind, payload in events:
                if seq <= self.after:
                    continue
                self.after = seq
                self._arrived(kind, payload, t)
            if events:
                try:
                    await self.call("Ack", "st", [IDENTIFIER, self.after])
                except BenchFailure:
                    pass
            await asyncio.sleep(self.poll)

    async def close(self) -> None:
        for task in (self.poller, self.in_bench):
            if task:
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        self.poller = self.in_bench = None
        if self.client_bus:
            await quiet_disconnect(self.client_bus)
            self.client_bus = None
        await self.stop(self.client_proc, self.client_reader)
        self.client_proc = self.client_reader = None
        await self.kill()
        if self.bus:
            await quiet_disconnect(self.bus)
            self.bus = None


def relinkd_contender(kind: str, bench: Bench, work: str, binary: str, poll_ms: float,
                      client: str = "process") -> "Relinkd | None":
    """`relinkd` (the build at `binary`) or `relinkd=PATH` (another build,
    named so, for an A/B comparison), either with `@MODE` for a client other
    than --relinkd-client's (`relinkd@signal`: the client in this process);
    None for any other kind."""
    base, _, mode = kind.partition("@")
    if mode and mode not in CLIENT_MODES:
        raise BenchFailure(f"unknown relinkd client {mode!r} in {kind!r} (one of {', '.join(CLIENT_MODES)})")
    if base == "relinkd":
        c = Relinkd(bench, work, binary, poll_ms, mode or client)
    elif base.startswith("relinkd="):
        c = Relinkd(bench, work, base.split("=", 1)[1], poll_ms, mode or client)
    else:
        return None
    c.name = kind
    return c


class BleakPeer(Contender):
    name = "bleak-retry-connector"

    def __init__(self, bench: Bench, work: str):
        super().__init__(bench, work)
        self.logpath = os.path.join(work, "bleak.log")
        self.reader: asyncio.Task | None = None

    async def spawn(self) -> float:
        addresses = [self.bench.address(self.bench.locks[i]) for i in self.links]
        t0 = time.monotonic()
        self.proc = await self.spawn_script("bleak_peer.py", *addresses, log="bleak.log",
                                            env={"DBUS_SYSTEM_BUS_ADDRESS": self.bench.bus})
        self.reader = asyncio.create_task(self.read_lines(self.proc, self._on_line))
        return t0

    async def setup(self, links: list[int]) -> None:
        self.links = links
        await self.spawn()

    def _on_line(self, msg: dict) -> None:
        """Everything but values goes to the log, beside the peer's stderr."""
        with open(self.logpath, "a") as log:
            log.write(json.dumps(msg) + "\n")
        if msg["ev"] == "disconnected":
            self.arrivals.drops.put_nowait(msg)

    async def kill(self) -> None:
        await self.stop(self.proc, self.reader)
        self.proc = self.reader = None

    async def close(self) -> None:
        await self.kill()


def build_relay(binary: str) -> None:
    """Compiles relay.c to `binary` unless it is there (once per run:
    seconds in the emulated VM)."""
    if os.path.exists(binary):
        return
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "dbus-1", "sqlite3"], check=True,
                           capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(HERE, "relay.c"), *flags], check=True)


class RelayFloor(Contender):
    """The floor for any agent: relay.c (C on libdbus, one StartNotify, each
    value re-sent at once as a unicast signal) with its client in a process
    of its own (relay_client.py, which keeps the link with an immediate,
    repeated Connect). No store, no restore: back in range only."""
    name = "relay (floor)"

    def __init__(self, bench: Bench, work: str):
        super().__init__(bench, work)
        self.logpath = os.path.join(work, "relay.log")
        self.binary = os.path.join(work, "relay")
        self.client_proc: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task | None = None
        self.client_name: asyncio.Future | None = None
        self.connected = asyncio.Event()

    def _on_client_line(self, msg: dict) -> None:
        if msg["ev"] == "name" and not self.client_name.done():
            self.client_name.set_result(msg["name"])
        elif msg["ev"] == "connected":
            self.connected.set()
        elif msg["ev"] == "disconnected":
            self.connected.clear()
            self.arrivals.drops.put_nowait(msg)

    async def setup(self, links: list[int]) -> None:
        self.links = links
        build_relay(self.binary)
        device = device_path(self.bench, self.bench.locks[0])
        self.client_name = asyncio.get_running_loop().create_future()
        self.client_proc = await self.spawn_script("relay_client.py", "--bus", self.bench.bus, "--device", device,
                                                   log="relay.log")
        self.reader = asyncio.create_task(self.read_lines(self.client_proc, self._on_client_line))
        name = await asyncio.wait_for(self.client_name, 20)
        await asyncio.wait_for(self.connected.wait(), 30)
        bus = await MessageBus(bus_address=self.bench.bus, bus_type=BusType.SYSTEM).connect()
        try:
            path = None
            for _ in range(100):  # services resolved a little after the link
                reply = await bus.call(Message(destination="org.bluez", path="/", member="GetManagedObjects",
                                               interface="org.freedesktop.DBus.ObjectManager"))
                path = characteristic_path(reply.body[0], device, LOCK_STATE)
                if path:
                    break
                await asyncio.sleep(0.05)
        finally:
            await quiet_disconnect(bus)
        if path is None:
            raise BenchFailure("relay: the lock state characteristic did not appear")
        with open(self.logpath, "ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                self.binary, self.bench.bus, name, path, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=log, preexec_fn=die_with_parent)
        line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
        if line.strip() != b"ready":
            raise BenchFailure("relay did not start:\n" + self.log_tail())

    async def close(self) -> None:
        await self.kill()
        await self.stop(self.client_proc, self.reader)
        self.client_proc = self.reader = None


class Prober:
    seq = 0

    def __init__(self, bench: Bench, period_ms: float):
        self.bench = bench
        self.period = period_ms / 1000

    async def until_all(self, contender: Contender, links: list[int], timeout: float) -> dict[int, float]:
        """Push a fresh probe to every link that has not delivered one, every
        period (a round waits for the previous one's replies), until each has
        delivered one pushed by this call. Returns link -> arrival time."""
        first = Prober.seq + 1
        self.first = first
        arrived: dict[int, float] = {}
        self.arrived_seq: dict[int, int] = {}
        deadline = time.monotonic() + timeout

        async def collect() -> None:
            while len(arrived) < len(links):
                link, seq, t = await contender.arrivals.values.get()
                if seq >= first and link in links and link not in arrived:
                    arrived[link] = t
                    self.arrived_seq[link] = seq

        collector = asyncio.create_task(collect())
        try:
            while not collector.done():
                if time.monotonic() > deadline:
                    missing = [l for l in links if l not in arrived]
                    raise BenchFailure(f"{contender.name}: no probe from links {missing} in {timeout} s\n"
                                       + contender.log_tail())
                tick = time.monotonic()
                pending = [l for l in links if l not in arrived]
                pushes = []
                for link in pending:
                    Prober.seq += 1
                    pushes.append(self.bench.push(link, Prober.seq))
                await asyncio.gather(*pushes)
                await asyncio.wait([collector], timeout=max(0.0, self.period - (time.monotonic() - tick)))
            return arrived
        finally:
            collector.cancel()


async def bluez_call(bus: MessageBus, member: str, path: str, iface: str, signature: str = "", body=None):
    """A call to bluetoothd; its error as a BenchFailure."""
    reply = await bus.call(Message(destination="org.bluez", path=path, interface=iface, member=member,
                                   signature=signature, body=body or []))
    if reply.message_type == MessageType.ERROR:
        raise BenchFailure(f"{member} {path}: {reply.error_name} {reply.body}")
    return reply.body


def characteristic_path(objects: dict, device: str, uuid: str) -> str | None:
    """The characteristic `uuid` under the device object `device`, in a
    GetManagedObjects reply; None when bluetoothd has not resolved it."""
    for path, ifs in objects.items():
        char = ifs.get("org.bluez.GattCharacteristic1")
        if char and path.startswith(device + "/") and char["UUID"].value == uuid:
            return path
    return None


def device_path(bench: Bench, name: str) -> str:
    return "/org/bluez/hci0/dev_" + bench.address(name).replace(":", "_")


class LinkWatch:
    """Stamps (CLOCK_MONOTONIC) each time BlueZ reports the lock's link up
    (`Connected` true on its Device1 on hci0), seen on the bench's own bus
    connection: when the link came up is the bench's doing, the same for
    both contenders; what each does after it is its own. Real bluetoothd
    5.66 sometimes signals no `Connected=true` for the central's Device1
    (docs/real-bluez.md, difference 4), so a `ServicesResolved=true` with no
    `Connected=true` since the last drop stands for the link coming up (a
    little late: after service discovery); `fallbacks` counts those.

    Also stamps each probe value bluetoothd puts on the bus (`Value` of the
    lock's characteristics): from the first of them on, bluetoothd was
    delivering to the contender's notify session, so any probe before the
    one that reached the client was dropped on the way."""

    def __init__(self, bus: MessageBus, path: str):
        self.bus, self.path = bus, path
        self.ups: asyncio.Queue = asyncio.Queue()
        self.up = False  # Connected=true seen since the last Connected=false
        self.fallbacks = 0
        self.values: dict[int, float] = {}  # probe seq -> first seen on the bus
        self.rule = (f"type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                     f"member='PropertiesChanged',path_namespace='{path}'")

    def _on(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL or msg.member != "PropertiesChanged" or not msg.body:
            return
        if msg.path == self.path and msg.body[0] == "org.bluez.Device1":
            connected = msg.body[1].get("Connected")
            resolved = msg.body[1].get("ServicesResolved")
            if connected is not None:
                self.up = connected.value is True
                if self.up:
                    self.ups.put_nowait(time.monotonic())
            elif resolved is not None and resolved.value is True and not self.up:
                self.up = True
                self.fallbacks += 1
                self.ups.put_nowait(time.monotonic())
        elif msg.path.startswith(self.path + "/") and msg.body[0] == "org.bluez.GattCharacteristic1":
            value = msg.body[1].get("Value")
            probe = parse_probe(bytes(value.value)) if value is not None else None
            if probe:
                self.values.setdefault(probe[1], time.monotonic())

    async def __aenter__(self) -> "LinkWatch":
        self.bus.add_message_handler(self._on)
        await self.bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                    interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                                    body=[self.rule]))
        return self

    async def __aexit__(self, *_) -> None:
        self.bus.remove_message_handler(self._on)
        await self.bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                    interface="org.freedesktop.DBus", member="RemoveMatch", signature="s",
                                    body=[self.rule]))

    def clear(self) -> None:
        while not self.ups.empty():
            self.ups.get_nowait()
        self.values.clear()

    async def on_bus(self, seq: int, timeout: float = 2.0) -> float | None:
        """When probe seq was seen on the bus (waiting for it a little: the
        bench's connection may read it after the contender's client)."""
        deadline = time.monotonic() + timeout
        while seq not in self.values and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return self.values.get(seq)


async def disconnect_all(bus: MessageBus, bench: Bench) -> None:
    """Leave no link behind for the next contender."""
    for name in bench.locks:
        path = device_path(bench, name)
        await bus.call(Message(destination="org.bluez", path=path, interface="org.bluez.Device1",
                               member="Disconnect"))


async def lock_away(c: Contender, bench: Bench) -> None:
    """The lock goes out of range; returns once the contender's client has
    seen its link drop (what it saw before is cleared)."""
    c.arrivals.clear()
    await bench.cmd("out_of_range", peripheral=bench.locks[0])
    await asyncio.wait_for(c.arrivals.drops.get(), 30)


async def measure_in_range(c: Contender, bench: Bench, prober: Prober, reps: int, away: float,
                           watch: LinkWatch, fig: "Figures", timeout: float = 60) -> None:
    """Back in range -> first probe at the client (`fig[""]`); link up ->
    that probe; first probe on the bus -> that probe; and how many probes
    bluetoothd put on the bus before it (dropped on the way to the client).
    Each sample goes to `fig` as it is taken: a failure keeps those before it."""
    await c.setup([0])
    await prober.until_all(c, [0], timeout)
    out, after_up, after_bus, dropped = (fig[k] for k in ("", "_after_link_up", "_after_first_value_on_bus",
                                                          "_dropped"))
    for _ in range(reps):
        await lock_away(c, bench)
        await asyncio.sleep(away)
        watch.clear()
        t0 = time.monotonic()
        wall0 = time.time()
        await bench.cmd("in_range", peripheral=bench.locks[0])
        t_reply = time.monotonic()
        arrived = await prober.until_all(c, [0], timeout)
        up = await asyncio.wait_for(watch.ups.get(), 5)
        out.append(arrived[0] - t0)
        after_up.append(arrived[0] - up)
        got = prober.arrived_seq[0]
        if await watch.on_bus(got) is None:
            raise BenchFailure(f"{c.name}: probe {got} reached the client but was never seen on the bus")
        on_bus = {seq: t for seq, t in watch.values.items() if seq >= prober.first}
        after_bus.append(arrived[0] - min(on_bus.values()))
        dropped.append(sum(1 for seq in on_bus if seq < got))
        if DEBUG:
            print(f"  in_range sent at {time.strftime('%H:%M:%S', time.gmtime(wall0))}{f'{wall0 % 1:.3f}'[1:]}Z, "
                  f"replied +{(t_reply - t0) * 1000:.0f} ms, link up +{(up - t0) * 1000:.1f} ms, "
                  f"probe arrived +{(arrived[0] - t0) * 1000:.1f} ms",
                  file=sys.stderr)
        await asyncio.sleep(0.3)


async def measure_once(c: Contender, bench: Bench, reps: int, away: float, watch: LinkWatch,
                       wait: float, fig: "Figures", timeout: float = 60) -> None:
    """A lock that sends its state once, as notifications are enabled again
    (`notify_on_subscribe`), and nothing more: no probes. Per sample, while
    the lock is away its state is set (silently) to a fresh probe; back in
    range -> that probe at the client, or missed if it has not arrived
    `wait` s after bluetoothd put it on the bus. A missed value is lost for
    good: the lock sends it again only at the next reconnection."""
    await c.setup([0])
    await Prober(bench, 20).until_all(c, [0], timeout)
    lock = bench.locks[0]
    await bench.cmd("notify_on_subscribe", peripheral=lock, on=True)
    out, missed, to_bus, after_bus = (fig[k] for k in ("", "_missed", "_to_bus", "_after_bus"))
    try:
        for _ in range(reps):
            await lock_away(c, bench)
            Prober.seq += 1
            seq = Prober.seq
            await bench.cmd("push", peripheral=lock, value=probe_hex(0, seq), silent=True)
            await asyncio.sleep(away)
            watch.clear()
            t0 = time.monotonic()
            wall0 = time.time()
            await bench.cmd("in_range", peripheral=lock)
            on_bus = await watch.on_bus(seq, timeout=timeout)
            if on_bus is None:
                raise BenchFailure(f"{c.name}: the lock's state {seq} never reached the bus")
            arrived = None
            deadline = on_bus + wait
            while arrived is None and (left := deadline - time.monotonic()) > 0:
                try:
                    link, got, t = await asyncio.wait_for(c.arrivals.values.get(), left)
                except asyncio.TimeoutError:
                    break
                if link == 0 and got == seq:
                    arrived = t
            to_bus.append(on_bus - t0)
            if arrived is None:
                missed.append(1)
            else:
                missed.append(0)
                out.append(arrived - t0)
                after_bus.append(arrived - on_bus)
            if DEBUG:
                print(f"  once: in_range sent at {time.strftime('%H:%M:%S', time.gmtime(wall0))}{f'{wall0 % 1:.3f}'[1:]}Z, "
                      f"state on the bus +{(on_bus - t0) * 1000:.1f} ms, "
                      + (f"at the client +{(arrived - t0) * 1000:.1f} ms" if arrived else "missed"), file=sys.stderr)
            # Let the contender settle (the peer subscribes again after its
            # connect) before the next drop.
            await asyncio.sleep(0.5)
    finally:
        await bench.cmd("notify_on_subscribe", peripheral=lock, on=False)


async def measure_flapping(c: Contender, bench: Bench, cycles: int, watch: LinkWatch, fig: "Figures",
                           seed: int, period_ms: float = 50, timeout: float = 60) -> None:
    """A device at the edge of range (issue 31): `cycles` times away for
    0.5-2 s, then back for 1-5 s (uniform, from `seed`: every contender
    gets the same schedule), while the device sends a fresh value every
    `period_ms` throughout, as a wearable streams. Per cycle: back in range
    -> the first value sent after it at the client (`fig[""]`; a cycle with
    none in its window counts in `_not_back`); and the values bluetoothd put
    on the bus in that cycle (sent while linked and armed) that never
    reached the client (`_lost`)."""
    rng = random.Random(seed)
    await c.setup([0])
    await Prober(bench, 20).until_all(c, [0], timeout)
    lock = bench.locks[0]
    got: dict[int, float] = {}

    async def collect() -> None:
        while True:
            link, seq, t = await c.arrivals.values.get()
            if link == 0:
                got.setdefault(seq, t)

    async def pusher() -> None:
        while True:
            Prober.seq += 1
            await bench.push(0, Prober.seq)
            await asyncio.sleep(period_ms / 1000)  # the device's send rate: time is what is measured

    out, not_back, lost = fig[""], fig["_not_back"], fig["_lost"]
    spans: list[tuple[int, int]] = []
    watch.clear()
    tasks = [asyncio.create_task(collect()), asyncio.create_task(pusher())]
    try:
        for _ in range(cycles):
            start = Prober.seq + 1
            await bench.cmd("out_of_range", peripheral=lock)
            await asyncio.sleep(rng.uniform(0.5, 2.0))  # the schedule: away 0.5-2 s
            mark = Prober.seq
            t0 = time.monotonic()
            await bench.cmd("in_range", peripheral=lock)
            window = t0 + rng.uniform(1.0, 5.0)
            first = None
            while time.monotonic() < window:
                first = first or min((t for seq, t in got.items() if seq > mark), default=None)
                await asyncio.sleep(0.005)  # polls the arrivals until the window (1-5 s) ends
            if first is None:
                not_back.append(1)
            else:
                not_back.append(0)
                out.append(first - t0)
            spans.append((start, Prober.seq))
        for task in tasks[1:]:
            task.cancel()
        # Stragglers: a value on the bus reaches a client within milliseconds.
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(seq not in got for seq in watch.values if seq >= spans[0][0]):
            await asyncio.sleep(0.01)  # polls, bounded by the 2 s deadline above
        for start, end in spans:
            lost.append(sum(1 for seq in watch.values if start <= seq <= end and seq not in got))
    finally:
        for task in tasks:
            task.cancel()
        c.arrivals.clear()


async def measure_restore(c: Contender, bench: Bench, prober: Prober, reps: int, n: int,
                          fig: "Figures", timeout: float = 60) -> None:
    """Restart -> a probe from each of n links at the client (`fig[""]`)."""
    links = list(range(n))
    await c.setup(links)
    await prober.until_all(c, links, timeout)
    out = fig[""]
    for _ in range(reps):
        await c.kill()
        await asyncio.sleep(0.5)
        c.arrivals.clear()
        t0 = await c.spawn()
        wall0 = time.time()
        arrived = await prober.until_all(c, links, timeout)
        out.append(max(arrived.values()) - t0)
        if DEBUG:
            offsets = " ".join(f"{(t - t0) * 1000:.0f}" for t in sorted(arrived.values()))
            print(f"  spawned at {time.strftime('%H:%M:%S', time.gmtime(wall0))}{f'{wall0 % 1:.3f}'[1:]}Z, "
                  f"links delivered at +ms: {offsets}", file=sys.stderr)


def fmt(xs: list[float]) -> str:
    ms = [x * 1000 for x in xs]
    return f"{statistics.median(ms):7.1f} ({min(ms):.0f}-{max(ms):.0f})"


def fmt_tail(xs: list[float]) -> str:
    """Mean and 90th percentile: a value dropped costs a whole probe period
    in the samples where it happens, which a median of a few samples hides."""
    ms = sorted(x * 1000 for x in xs)
    p90 = ms[min(len(ms) - 1, max(0, -(-9 * len(ms) // 10) - 1))]  # nearest rank
    return f"{statistics.fmean(ms):7.1f}; {p90:.1f}"


def fmt_count(xs: list[int]) -> str:
    """Total over the samples, and in how many samples any."""
    return f"{sum(xs)} in {sum(1 for x in xs if x)} of {len(xs)}"


def fit(ns: list[int], ys: list[float]) -> tuple[float, float, float]:
    """Least squares y = a + b n; returns a, b, r^2."""
    mn, my = statistics.fmean(ns), statistics.fmean(ys)
    sxx = sum((n - mn) ** 2 for n in ns)
    b = sum((n - mn) * (y - my) for n, y in zip(ns, ys)) / sxx
    a = my - b * mn
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a - b * n) ** 2 for n, y in zip(ns, ys))
    return a, b, (1 - ss_res / ss_tot) if ss_tot else 1.0


async def recover(bench: Bench, bus: MessageBus) -> None:
    """After a failed sample: every lock back in range and no link left, so
    that the next contender starts as the others did."""
    state = (await bench.cmd("status")).get("state", {})
    for name in bench.locks:
        if not state.get(name, {}).get("in_range", True):
            await bench.cmd("in_range", peripheral=name)
        await bench.cmd("notify_on_subscribe", peripheral=name, on=False)
    await disconnect_all(bus, bench)


FAILURES = (BenchFailure, asyncio.TimeoutError)
FAILED_STATUS = 3  # the table was printed, and some contender's turn failed


async def run(args) -> dict:
    work = workdir = tempfile.mkdtemp(prefix="relink-restore-bench-")
    bench = Bench(max(args.links), args.connect_timeout, work, args.backend)
    results: dict = {}
    contenders: list[Contender] = []
    bus = None
    try:
        await bench.start()
        bus = await MessageBus(bus_address=bench.bus, bus_type=BusType.SYSTEM).connect()
        prober = Prober(bench, args.restore_probe_ms)

        def make(kind: str) -> Contender:
            c = relinkd_contender(kind, bench, work, args.relinkd, args.poll_ms, args.relinkd_client)
            if c is None:
                kinds = {"bleak": BleakPeer, "relay": RelayFloor}
                if kind not in kinds:
                    raise BenchFailure(f"unknown contender {kind!r} (relinkd, relinkd=PATH, bleak, relay)")
                c = kinds[kind](bench, work)
            if isinstance(c, Relinkd):
                c.log_level = args.relinkd_log_level
            contenders.append(c)
            return c

        async def measured(c: Contender, fig: Figures, what: str, measure) -> None:
            """`measure()`, then the contender closed and no link left; a
            failure is recorded in `fig` and the bench set back (the run goes
            on with the next contender or round)."""
            try:
                await measure()
            except FAILURES as e:
                reason = f"{type(e).__name__}: {e}".strip().splitlines()[0][:300]
                print(f"[{c.name}] {what}: FAILED: {reason}", file=sys.stderr, flush=True)
                fig.fail(reason)
                await c.close()
                await recover(bench, bus)
            await c.close()
            await disconnect_all(bus, bench)

        async def in_rounds(total: int, what: str, key: str, measure) -> None:
            """Back-in-range samples: the contenders take turns, a round of
            samples each, so that a drift of the bench over the run (BlueZoo
            slows down as it runs) weighs on all alike. `measure(c, reps,
            watch, fig)` puts its figures in `fig` by key suffix."""
            rounds = max(1, min(args.rounds, total))
            for r in range(rounds):
                reps = total // rounds + (1 if r < total % rounds else 0)
                if not reps:
                    continue
                for kind in (args.contenders if r % 2 == 0 else list(reversed(args.contenders))):
                    c = make(kind)
                    print(f"[{c.name}] back in range, {what}, x{reps} (round {r + 1} of {rounds})",
                          file=sys.stderr, flush=True)
                    fig = Figures(results, c.name, key)
                    async with LinkWatch(bus, device_path(bench, bench.locks[0])) as watch:
                        await measured(c, fig, what, lambda: measure(c, reps, watch, fig))
                        if watch.fallbacks:
                            fig["_up_from_resolved_count"].append(watch.fallbacks)

        for period in args.probe_ms:
            await in_rounds(args.reps_in_range, f"probe every {period:g} ms", in_range_key(period),
                            lambda c, reps, watch, fig: measure_in_range(c, bench, Prober(bench, period), reps,
                                                                         args.away, watch, fig, args.timeout))
        # The lock that sends its state once at the reconnection.
        await in_rounds(args.once_reps, "the lock's state sent once", "once",
                        lambda c, reps, watch, fig: measure_once(c, bench, reps, args.away, watch, args.once_wait,
                                                                 fig, args.timeout))
        # The device at the edge of range.
        await in_rounds(args.flap_cycles, "flapping at the edge of range", "flapping",
                        lambda c, reps, watch, fig: measure_flapping(c, bench, reps, watch, fig,
                                                                     args.flap_seed, timeout=args.timeout))
        # N by N, so that what a larger N does to the bench (on real BlueZ:
        # more concurrent connections) cannot spoil a smaller N's figures.
        for n in args.links:
            for kind in args.contenders:
                if kind == "relay":
                    continue  # no restore: it keeps nothing
                c = make(kind)
                print(f"[{c.name}] restore N={n} x{args.reps}", file=sys.stderr, flush=True)
                fig = Figures(results, c.name, f"restore_{n}")
                await measured(c, fig, f"restore N={n}",
                               lambda: measure_restore(c, bench, prober, args.reps, n, fig, args.timeout))
        if args.keep_logs or any(r.get("errors") for r in results.values()):
            print(f"restore_bench: logs kept in {work}", file=sys.stderr)
            work = None
        return results
    except asyncio.CancelledError:
        raise
    except BaseException:
        print(f"restore_bench: failed; logs kept in {work}", file=sys.stderr)
        work = None
        raise
    finally:
        for c in contenders:
            await c.close()
        if bus:
            await quiet_disconnect(bus)
        await bench.stop()
        save_logs(workdir)
        if work:
            shutil.rmtree(work, ignore_errors=True)


def save_logs(work: str) -> None:
    """In the real-BlueZ VM the work directory is in the guest's /tmp (relinkd's
    SQLite store and the bench's socket do not belong on the 9p share), gone
    with the VM: its logs are copied to run-vm's log directory."""
    logdir = os.environ.get("RELINK_REALBLUEZ_LOGDIR")
    if not (IN_GUEST and logdir and os.path.isdir(work)):
        return
    dest = os.path.join(logdir, "restore-bench")
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(work):
        if name.endswith(".log"):
            shutil.copy(os.path.join(work, name), dest)


def in_range_key(period_ms: float) -> str:
    return f"in_range_{period_ms:g}ms"


def report(results: dict, args) -> None:
    names = list(results)
    delivery = {"process": "relinkd client: Central1.Event signals, in its own process",
                "signal": "relinkd client: Central1.Event signals, in the bench's process",
                "poll": f"relinkd Events polled every {args.poll_ms:g} ms"}[args.relinkd_client]
    where = {"mock": "simulated bench (BlueZoo)",
             "bluez": "real bluetoothd 5.66 and btvirt controllers in the VM of bench/realbluez"}[args.backend]
    print(f"\n{where}; relinkd {args.relinkd}")
    print(f"ms, median (min-max) of {args.reps_in_range} (back in range, {args.rounds} alternating rounds), "
          f"{args.once_reps} (state sent once; of those delivered; missed: not at the client {args.once_wait:g} s "
          f"after it was on the bus) and {args.reps} (restore); "
          f"restore probes every {args.restore_probe_ms:g} ms; {delivery}; bench connect timeout "
          f"{args.connect_timeout:g} s, lock away {args.away:g} s")
    header = f"{'measure':<34}" + "".join(f"{n:>26}" for n in names)
    print(header)
    print("-" * len(header))
    for label, key in table_rows(args, results):
        cell = (fmt_count if key.endswith(("_dropped", "_missed", "_lost", "_not_back")) else fmt_tail if key.endswith("#tail")
                else fmt_failed if key.endswith("_failed") else fmt_sum if key.endswith("_count") else fmt)
        key = key.removesuffix("#tail")
        print(f"{label:<34}" + "".join(f"{cell(results[n][key]) if results[n].get(key) else 'n/a':>26}"
                                       for n in names))
    if len(args.links) >= 2:
        print()
        for n in names:
            if not all(results[n].get(f"restore_{k}") for k in args.links):
                continue
            meds = [statistics.median(results[n][f"restore_{k}"]) for k in args.links]
            a, b, r2 = fit(args.links, meds)
            print(f"{n}: restore median ~ {a * 1000:.0f} ms + {b * 1000:.1f} ms x N (r^2 {r2:.3f})")
    for n in names:
        for error in results[n].get("errors", []):
            print(f"{n}: FAILED {error}")


def table_rows(args, results: dict) -> list[tuple[str, str]]:
    """(label, results key) of each row; a key ending in #tail is printed as
    the mean and 90th percentile. Rows of failures, and of link-up stamps
    taken from ServicesResolved, only when some contender has one."""
    def some(key: str) -> bool:
        return any(r.get(key) for r in results.values())

    def failed(key: str) -> list[tuple[str, str]]:
        return [("  FAILED (no value in the bound)", key + "_failed")] if some(key + "_failed") else []

    rows = []
    for period in (args.probe_ms if args.reps_in_range else []):
        key = in_range_key(period)
        rows += [(f"back in range, probe {period:g} ms", key),
                 ("  mean; 90th percentile", key + "#tail"),
                 ("  of which after link up", key + "_after_link_up")]
        if some(key + "_up_from_resolved_count"):  # real bluetoothd: no Connected=true signal
            rows.append(("  link up seen as ServicesResolved", key + "_up_from_resolved_count"))
        rows += [("  after the first value on the bus", key + "_after_first_value_on_bus"),
                 ("  values dropped (total)", key + "_dropped")] + failed(key)
    if args.once_reps:
        rows += [("state sent once at re-arm", "once"),
                 ("  bluetoothd put it on the bus", "once_to_bus"),
                 ("  after it was on the bus", "once_after_bus"),
                 ("  missed (lost for good)", "once_missed")] + failed("once")
    if args.flap_cycles:
        rows += [("flapping: back -> first value", "flapping"),
                 ("  mean; 90th percentile", "flapping#tail"),
                 ("  cycles with no value", "flapping_not_back"),
                 ("  values lost on the way", "flapping_lost")] + failed("flapping")
    for n in args.links:
        rows += [(f"restart -> {n} link(s) restored", f"restore_{n}")] + failed(f"restore_{n}")
    return rows


def fmt_sum(xs: list[int]) -> str:
    return f"{sum(xs)} time(s)"


def fmt_failed(xs: list[int]) -> str:
    """Failed samples: each ended a contender's turn (its later samples of
    that turn were not taken)."""
    return f"{sum(xs)} turn(s)"


# Defaults that differ by backend: on real bluetoothd in the emulated VM a
# sample takes seconds, not milliseconds, and each lock needs a controller.
DEFAULTS = {
    "mock": {"reps": 9, "reps_in_range": 15, "once_reps": 15, "links": "1,2,4,8", "probe_ms": "2,20",
             "contenders": "relinkd,bleak"},
    "bluez": {"reps": 5, "reps_in_range": 6, "once_reps": 4, "links": "1,2,4", "probe_ms": "20",
              "contenders": "relinkd,bleak,relay"},
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=tuple(DEFAULTS), default="mock",
                   help="mock: the simulated bench (BlueZoo), here; bluez: real bluetoothd 5.66 with btvirt "
                        "controllers, run inside the VM of bench/realbluez (booted by this script: one "
                        "controller per lock plus hci0; btvirt allows 16 in all)")
    p.add_argument("--relinkd", default=os.path.join(ROOT, ".build", "release", "relinkd"))
    p.add_argument("--reps", type=int, help="restore repetitions per N (default: mock 9, bluez 5)")
    p.add_argument("--rounds", type=int, default=3,
                   help="back in range: the contenders alternate this many rounds of samples")
    p.add_argument("--reps-in-range", type=int,
                   help="back-in-range repetitions (the bench completes a pending Connect on a "
                        "50 ms poll, so this figure needs more samples; default: mock 15, bluez 6)")
    p.add_argument("--links", help="comma-separated N for the restore runs (default: mock 1,2,4,8, bluez 1,2,4)")
    p.add_argument("--contenders", help="default: mock relinkd,bleak, bluez relinkd,bleak,relay; "
                        "comma-separated: relinkd, bleak, relay (relay.c, the floor for any agent; back "
                        "in range only), relinkd=PATH (another relinkd build, for an A/B "
                        "comparison); a relinkd kind may end in @process, @signal or @poll (its client, "
                        "see --relinkd-client)")
    p.add_argument("--probe-ms",
                   help="comma-separated probe periods for the back-in-range samples (each its own row; "
                        "default: mock 2,20, bluez 20)")
    p.add_argument("--restore-probe-ms", type=float, default=20, help="probe period of the restore runs")
    p.add_argument("--once-reps", type=int,
                   help="samples of the lock that sends its state once as notifications are enabled "
                        "again (0: none; default: mock 15, bluez 4)")
    p.add_argument("--flap-cycles", type=int, default=0,
                   help="cycles of the device flapping at the edge of range (away 0.5-2 s, back 1-5 s, "
                        "a value every 50 ms throughout; 0: none); in rounds like the back-in-range samples")
    p.add_argument("--flap-seed", type=int, default=1, help="seed of the flapping schedule (the same for all)")
    p.add_argument("--once-wait", type=float, default=2.0,
                   help="seconds after the state reached the bus before it counts as missed")
    p.add_argument("--relinkd-client", choices=CLIENT_MODES, default="process",
                   help="how the relinkd client gets events: Central1.Event signals after "
                        "Manager1.Register (what a real client does), in a process of its own "
                        "(relinkd_client.py, as the peer's client is) or in this process "
                        "(signal: sharing its event loop with the prober and the bus watch); "
                        "or polling Control1.Events from this process")
    p.add_argument("--relinkd-log-level", default="info", help="relinkd's --log-level (debug for timelines)")
    p.add_argument("--poll-ms", type=float, default=5, help="with --relinkd-client poll")
    p.add_argument("--away", type=float, default=1.0, help="seconds out of range after the drop is seen")
    p.add_argument("--connect-timeout", type=float, default=20.0,
                   help="the bench's LE connect timeout (real kernels: 20 s)")
    p.add_argument("--timeout", type=float, default=60,
                   help="seconds a sample waits for its value before the contender's turn counts as failed")
    p.add_argument("--vm-timeout", type=float, default=5400, help="bluez: seconds for the whole VM run")
    p.add_argument("--keep-logs", action="store_true", help="keep the work directory (logs)")
    p.add_argument("--json", help="also write the raw figures (seconds) here")
    args = p.parse_args(argv)
    for name, value in DEFAULTS[args.backend].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.links = [int(x) for x in args.links.split(",")]
    args.probe_ms = [float(x) for x in args.probe_ms.split(",")]
    args.contenders = args.contenders.split(",")
    if args.backend == "bluez" and max(args.links) > MAX_LOCKS:
        p.error(f"--links: at most {MAX_LOCKS} locks on the bluez backend (btvirt: 16 controllers, "
                "one is the central)")
    return args


# btvirt's emulator keeps at most 16 controllers (MAX_BTDEV_ENTRIES); hci0 is
# the central.
MAX_LOCKS = 15


def guest_argv(args, argv: list[str], logdir: str) -> list[str]:
    """This script's command line inside the VM: the same arguments, with
    --json written into the VM's log directory (the only place the guest
    writes through to the host) and an absolute --relinkd."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--json":
            skip = True
        elif not a.startswith("--json="):
            out.append(a)
    out += ["--relinkd", os.path.abspath(args.relinkd)]
    if args.json:
        out += ["--json", os.path.join(logdir, "figures.json")]
    python = os.path.join(ROOT, ".venv", "bin", "python")
    return [python, os.path.abspath(__file__), *out]


def in_vm(args, argv: list[str]) -> int:
    """--backend bluez on the host: boot the real-BlueZ VM (run-vm, one
    controller per lock plus hci0, no bluetoothd: the bench starts its own)
    and run this script with the same arguments in it; its table comes out
    on stdout. Samples the host's load average meanwhile (the VM is emulated:
    its figures depend on it) and prints it after the run."""
    if not os.access(args.relinkd, os.X_OK):
        print(f"restore_bench: {args.relinkd} missing (scripts/build-release.sh relinkd)", file=sys.stderr)
        return 2
    logdir = os.path.join(ROOT, ".cache", "realbluez", "logs", "restore-bench")
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    cmd = [os.path.join(ROOT, "bench", "realbluez", "run-vm"), "--no-bluetoothd",
           "--controllers", str(max(args.links) + 1), "--logdir", logdir, "--timeout", f"{args.vm_timeout:g}",
           "--", *guest_argv(args, argv, logdir)]
    loads: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while True:
            with open("/proc/loadavg") as f:
                loads.append(float(f.read().split()[0]))
            if done.wait(10):
                return
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.time()
    print(f"restore_bench: booting the real-BlueZ VM ({max(args.links) + 1} controllers), logs in {logdir}",
          file=sys.stderr, flush=True)
    vm = subprocess.Popen(cmd, cwd=ROOT)
    # run-vm takes qemu (in a session of its own) down when it gets SIGTERM.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: vm.send_signal(signal.SIGTERM))
    status = vm.wait()
    done.set()
    sampler.join()
    print(f"\nhost: {os.cpu_count()} cores, load average (1 min) during the run "
          f"{min(loads):.1f}-{max(loads):.1f} (median {statistics.median(loads):.1f}, {len(loads)} samples), "
          f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime(started))}-{time.strftime('%H:%M UTC', time.gmtime())}")
    if args.json and os.path.exists(os.path.join(logdir, "figures.json")):
        shutil.copy(os.path.join(logdir, "figures.json"), args.json)
    return status


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.backend == "bluez" and not IN_GUEST:
        return in_vm(args, sys.argv[1:] if argv is None else argv)

    async def guarded() -> dict:
        # SIGTERM/SIGINT cancel the run, which unwinds through its cleanup.
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        return await run(args)
    try:
        results = asyncio.run(guarded())
    except asyncio.CancelledError:
        print("restore_bench: stopped by a signal", file=sys.stderr)
        return 143
    report(results, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items()}, "results": results}, f, indent=1)
    # A contender that failed is a result (in the table), but not a clean run.
    return FAILED_STATUS if any(r.get("errors") for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
