"""Many links streaming (issue 31, goal 6): N bands notifying R values a
second each, through relinkd and through the floor relays (relay.c, plain
and --durable), one after the other on one simulated bench.

  .venv/bin/python bench/relink/stream_bench.py [--links 100] [--rate 20] [--seconds 20]
      [--contenders relay,relay-durable,relinkd] [--rounds 1] [--relinkd PATH] [--json FILE]

The bands (relinkbench/peripheral/band.py) stream from the start; each value
carries a counter that grows by one, so a lost or doubled value shows. For
each contender in turn:

  * setup. relinkd (a fresh state directory): one identifier, then for each
    band a connection pending until cancelled and a subscription to its
    heart-rate measurement (Control1, as restore_bench.py does); its client,
    stream_client.py, attaches (Manager1.Register), takes Central1.Event and
    acknowledges. relay: this script connects every band (Device1.Connect),
    then relay.c subscribes (StartNotify) to the N characteristics and
    re-sends each value at once to its client, stream_client.py --relay.
    relay-durable: the same with relay.c --durable, which commits each
    value to an SQLite outbox before sending it and deletes what its client
    acknowledges (stream_client.py --relay --ack) in a commit of its own:
    the floor for an agent that, like relinkd, loses no value it took.
  * warm-up: until every link has delivered a value (bounded).
  * the window (--seconds): the agent's CPU time (user + system, every
    thread: /proc/PID/stat) and the values its client took. Figures: values
    a second, CPU microseconds per forwarded value, the share of CPU the
    agent took, and how busy the whole machine was (/proc/stat: above ~95%
    the bench itself is the limit, and says so).
  * drain: every band stops; once the client holds each band's last value
    (bounded), the values lost: per link, counters from the first the
    client took to the band's last that never reached it; and doubles.
    The bands stream again for the next contender.

The goal: 0 lost and relinkd's CPU per value <= 2 x the relay's. Build
first: scripts/build-release.sh relinkd. Every process started here dies
with it (PR_SET_PDEATHSIG).
"""

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import restore_bench as rb  # noqa: E402
from relinkbench.peripheral.band import HEART_RATE, HR_MEASUREMENT  # noqa: E402
from relinkbench.waiting import WaitTimeout, wait_until_async  # noqa: E402

RELINKD = os.path.join(HERE, "..", "..", ".build", "release", "relinkd")
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system time of a process, every thread, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def machine_times() -> tuple[float, float]:
    """(busy, total) jiffies of every CPU since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])      # guest time is already in user
    return total - idle, total


class StreamClient:
    """stream_client.py in a process of its own, asked for reports on stdin."""

    def __init__(self, contender: rb.Contender, *args: str):
        self.contender = contender
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task | None = None
        self.name: asyncio.Future = asyncio.get_running_loop().create_future()
        self.attached = asyncio.Event()
        self.reports: asyncio.Queue = asyncio.Queue()

    def _on(self, msg: dict) -> None:
        if msg["ev"] == "name" and not self.name.done():
            self.name.set_result(msg["name"])
        elif msg["ev"] == "attached":
            self.attached.set()
        elif msg["ev"] == "report":
            self.reports.put_nowait(msg)

    async def start(self) -> str:
        self.proc = await self.contender.spawn_script("stream_client.py", "--bus", self.contender.bench.bus,
                                                      *self.args, log="stream-client.log",
                                                      stdin=asyncio.subprocess.PIPE)
        self.reader = asyncio.create_task(self.contender.read_lines(self.proc, self._on))
        return await asyncio.wait_for(self.name, 20)

    async def report(self) -> dict:
        self.proc.stdin.write(b"report\n")
        await self.proc.stdin.drain()
        return await asyncio.wait_for(self.reports.get(), 20)

    async def stop(self) -> None:
        await rb.Contender.stop(self.proc, self.reader)
        self.proc = self.reader = None


class Relinkd(rb.Relinkd):
    """relinkd with stream_client.py as its program."""

    def __init__(self, bench: rb.Bench, work: str, binary: str, name: str):
        super().__init__(bench, work, binary, poll_ms=5, client="process")
        self.name = name
        self.stream: StreamClient | None = None
        self.links_by_key: dict[str, str] = {}

    async def _spawn_client(self) -> None:
        """Not relinkd_client.py: setup starts stream_client.py."""

    async def setup(self) -> None:
        await self.spawn()
        await self.wait_up()
        await self.call("Register", "s", [rb.IDENTIFIER])
        self.stream = StreamClient(self, "--relinkd", rb.IDENTIFIER)
        await self.stream.start()
        await asyncio.wait_for(self.stream.attached.wait(), 30)
        for name in self.bench.locks:
            address = self.bench.address(name)
            (uuid,) = await self.call("Connect", "ssa{sv}", [rb.IDENTIFIER, address,
                                                            {"pending_until_cancelled": Variant("b", True)}])
            self.links_by_key[uuid] = name
            await self.call("Subscribe", "ssss", [rb.IDENTIFIER, address, HEART_RATE, HR_MEASUREMENT])

    @property
    def agent_pid(self) -> int:
        return self.proc.pid

    async def close(self) -> None:
        if self.stream:
            await self.stream.stop()
            self.stream = None
        await super().close()


class Relay(rb.Contender):
    """relay.c on every band's measurement, with stream_client.py --relay."""

    def __init__(self, bench: rb.Bench, work: str, bus: MessageBus, connect_timeout: float, durable: bool = False):
        super().__init__(bench, work)
        self.name = "relay-durable" if durable else "relay"
        self.durable = durable
        self.bus = bus
        self.connect_timeout = connect_timeout
        self.logpath = os.path.join(work, "relay.log")
        self.binary = os.path.join(work, "relay")
        self.stream: StreamClient | None = None
        self.links_by_key: dict[str, str] = {}

    async def _connect(self, name: str, timeout: float) -> None:
        path = rb.device_path(self.bench, name)
        reply: Message | None = None

        async def connected() -> bool:
            nonlocal reply
            reply = await self.bus.call(Message(destination="org.bluez", path=path, interface="org.bluez.Device1",
                                                member="Connect"))
            return reply.message_type != MessageType.ERROR or reply.error_name == "org.bluez.Error.AlreadyConnected"
        try:
            await wait_until_async(connected, timeout, f"{name} to connect")
        except WaitTimeout:
            raise rb.BenchFailure(f"relay: {name} did not connect: {reply.error_name} {reply.body}") from None

    async def setup(self) -> None:
        rb.build_relay(self.binary)
        deadline = time.monotonic() + self.connect_timeout
        # Scanning until every band is connected: bluetoothd knows a device
        # (and accepts its Connect) once it has seen it advertise.
        await rb.bluez_call(self.bus, "StartDiscovery", "/org/bluez/hci0", "org.bluez.Adapter1")
        try:
            for name in self.bench.locks:
                await self._connect(name, max(0.0, deadline - time.monotonic()))
        finally:
            await rb.bluez_call(self.bus, "StopDiscovery", "/org/bluez/hci0", "org.bluez.Adapter1")
        paths: dict[str, str] = {}

        async def resolved() -> bool:  # services resolve a little after each link
            (objects,) = await rb.bluez_call(self.bus, "GetManagedObjects", "/", "org.freedesktop.DBus.ObjectManager")
            for name in self.bench.locks:
                path = rb.characteristic_path(objects, rb.device_path(self.bench, name), HR_MEASUREMENT)
                if path:
                    paths[name] = path
            return len(paths) == len(self.bench.locks)
        try:
            await wait_until_async(resolved, max(0.0, deadline - time.monotonic()), "every heart-rate characteristic",
                                   interval=0.1)
        except WaitTimeout:
            missing = sorted(set(self.bench.locks) - set(paths))
            raise rb.BenchFailure(f"relay: no heart-rate characteristic on {missing[:5]}") from None
        self.links_by_key = {path: name for name, path in paths.items()}
        self.stream = StreamClient(self, "--relay", *(["--ack"] if self.durable else []))
        client_name = await self.stream.start()
        outbox = os.path.join(self.work, "relay-outbox.sqlite")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(outbox + suffix):
                os.remove(outbox + suffix)
        durable = ["--durable", outbox] if self.durable else []
        with open(self.logpath, "ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                self.binary, *durable, self.bench.bus, client_name, *paths.values(), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=log, preexec_fn=rb.die_with_parent)
        line = await asyncio.wait_for(self.proc.stdout.readline(), 60)
        if line.strip() != b"ready":
            raise rb.BenchFailure("relay did not start:\n" + self.log_tail())

    @property
    def agent_pid(self) -> int:
        return self.proc.pid

    async def close(self) -> None:
        await self.kill()
        if self.stream:
            await self.stream.stop()
            self.stream = None


def by_band(report: dict, links_by_key: dict[str, str]) -> dict[str, dict]:
    return {links_by_key[k]: v for k, v in report["links"].items() if k in links_by_key}


async def measure(c, bench: rb.Bench, args) -> dict:
    """One contender: warm-up, the window, the drain (module docstring)."""
    names = bench.locks
    links: dict[str, dict] = {}

    async def taken(done) -> bool:
        """The client's report, by band, in `links`; whether `done(links)`."""
        links.clear()
        links.update(by_band(await c.stream.report(), c.links_by_key))
        return done(links)
    try:  # warm-up: a value from every link
        await wait_until_async(lambda: taken(lambda ls: len(ls) == len(names)), args.timeout,
                               "a value from every link", interval=0.2)
    except WaitTimeout:
        missing = sorted(set(names) - set(links))
        raise rb.BenchFailure(f"{c.name}: no value from {len(missing)} links ({missing[:5]}) "
                              f"in {args.timeout} s\n" + c.log_tail()) from None
    cpu0, (busy0, total0), before = cpu_seconds(c.agent_pid), machine_times(), await c.stream.report()
    await asyncio.sleep(args.seconds)  # the measured window, not a wait for a condition
    after = await c.stream.report()
    cpu1, (busy1, total1) = cpu_seconds(c.agent_pid), machine_times()
    elapsed = after["t"] - before["t"]
    values = after["values"] - before["values"]
    # Drain: each band stops; its last counter must reach the client.
    finals = {}
    for name in names:
        finals[name] = (await bench.cmd("stop_stream", peripheral=name))["counter"]
    def behind(ls: dict[str, dict]) -> list[str]:
        return [n for n in names if ls.get(n, {}).get("last", -1) < finals[n]]
    try:
        await wait_until_async(lambda: taken(lambda ls: not behind(ls)), args.timeout,
                               "every band's last value", interval=0.2)
    except WaitTimeout:
        pass  # counted below as links still behind
    lost = sum(max(0, finals[n] - links[n]["first"] + 1 - links[n]["distinct"]) for n in names if n in links)
    doubled = sum(v["count"] - v["distinct"] for v in links.values())
    for name in names:
        await bench.cmd("start_stream", peripheral=name)
    cpu = cpu1 - cpu0
    return {
        "values": values, "seconds": elapsed, "values_per_s": values / elapsed if elapsed else 0.0,
        "offered_per_s": args.links * args.rate,
        "cpu_s": cpu, "cpu_us_per_value": cpu / values * 1e6 if values else float("inf"),
        "agent_cpu_share": cpu / elapsed if elapsed else 0.0,
        "machine_busy": (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0,
        "lost": lost, "doubled": doubled, "links_behind_after_drain": len(behind(links)),
        "values_checked": sum(v["distinct"] for v in links.values()),
    }


async def run(args) -> dict:
    work = tempfile.mkdtemp(prefix="relink-stream-bench-")
    bench = rb.Bench(args.links, args.connect_timeout, work, kind="band",
                     options=("--band-rate", str(args.rate)))
    results: dict = {}
    bus = None
    keep = args.keep_logs
    try:
        print(f"stream_bench: starting {args.links} bands at {args.rate:g} values/s", file=sys.stderr, flush=True)
        await bench.start()
        bus = await MessageBus(bus_address=bench.bus, bus_type=BusType.SYSTEM).connect()
        for r in range(args.rounds):
            for kind in (args.contenders if r % 2 == 0 else list(reversed(args.contenders))):
                if kind in ("relay", "relay-durable"):
                    c = Relay(bench, work, bus, args.timeout, durable=kind == "relay-durable")
                elif kind == "relinkd" or kind.startswith("relinkd="):
                    binary = kind.split("=", 1)[1] if "=" in kind else args.relinkd
                    c = Relinkd(bench, work, binary, kind)
                else:
                    raise rb.BenchFailure(f"unknown contender {kind!r} (relay, relay-durable, relinkd, relinkd=PATH)")
                print(f"[{c.name}] round {r + 1}: setting up {args.links} links", file=sys.stderr, flush=True)
                try:
                    await c.setup()
                    figures = await measure(c, bench, args)
                except rb.BenchFailure as e:
                    keep = True
                    figures = {"error": str(e).splitlines()[0][:300]}
                finally:
                    await c.close()
                    await rb.disconnect_all(bus, bench)
                print(f"[{c.name}] {json.dumps(figures)}", file=sys.stderr, flush=True)
                results.setdefault(c.name, []).append(figures)
        return results
    finally:
        if bus:
            await rb.quiet_disconnect(bus)
        await bench.stop()
        rb.save_logs(work)
        if keep:
            print(f"stream_bench: logs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(results: dict, args) -> None:
    print(f"\n{args.links} links x {args.rate:g} values/s ({args.links * args.rate:g} offered a second), "
          f"{args.seconds:g} s windows")
    print(f"{'contender':<12} {'values/s':>9} {'CPU us/value':>13} {'agent CPU':>10} {'machine':>8} "
          f"{'lost':>5} {'doubled':>8}")
    for name, runs in results.items():
        for f in runs:
            if "error" in f:
                print(f"{name:<12} FAILED: {f['error']}")
                continue
            print(f"{name:<12} {f['values_per_s']:>9.0f} {f['cpu_us_per_value']:>13.1f} "
                  f"{f['agent_cpu_share']:>9.0%} {f['machine_busy']:>8.0%} {f['lost']:>5} {f['doubled']:>8}")
    for floor_name, goal in (("relay", " (goal <= 2)"), ("relay-durable", "")):
        floor = [f["cpu_us_per_value"] for f in results.get(floor_name, []) if "error" not in f]
        for name, runs in results.items():
            if not name.startswith("relinkd") or not floor:
                continue
            ok = [f["cpu_us_per_value"] for f in runs if "error" not in f]
            if ok:
                print(f"{name} / {floor_name}, CPU per value: {min(ok) / min(floor):.2f} (best of each){goal}")
    if any(f.get("machine_busy", 0) > 0.95 for runs in results.values() for f in runs):
        print("note: the machine was over 95% busy in a window: the bench (BlueZoo, the bands) may be the limit")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--links", type=int, default=100)
    p.add_argument("--rate", type=float, default=20.0, help="values a second from each band")
    p.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    p.add_argument("--contenders", type=lambda s: s.split(","), default=["relay", "relay-durable", "relinkd"])
    p.add_argument("--rounds", type=int, default=1, help="each contender this many times, alternating the order")
    p.add_argument("--relinkd", default=RELINKD)
    p.add_argument("--timeout", type=float, default=120.0, help="bound on setup, warm-up and drain")
    p.add_argument("--connect-timeout", type=float, default=5.0, help="the bench's (BlueZ's) connect timeout")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--keep-logs", action="store_true")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = asyncio.run(run(args))
    report(results, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)
    failed = any("error" in f for runs in results.values() for f in runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
