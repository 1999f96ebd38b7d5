"""End-to-end test support: the real relinkd binary on a bench's private bus,
the example lock client as a process, and a blocking D-Bus caller.

Every process started here has PR_SET_PDEATHSIG=SIGKILL and is stopped by
the fixtures that own it, also when a test fails."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import queue
import signal
import subprocess
import threading
import time
from typing import Any, Callable, Optional

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

import sys  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from relinkbench.apipaths import central_path  # noqa: E402,F401  (the tests import it from here)
from relinkbench.waiting import wait_until  # noqa: E402,F401  (the tests import it from here)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RELINKD = os.environ.get("RELINKD", os.path.join(ROOT, ".build", "debug", "relinkd"))
EXAMPLE = os.path.join(ROOT, "examples", "python-lock")
BAND_EXAMPLE = os.path.join(ROOT, "examples", "python-band")
# What the Python examples share (relink_example: the thin client, events, the program).
EXAMPLE_COMMON = os.path.join(ROOT, "examples", "python-common")
VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")

LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
MANAGER = "org.relink.Manager1"
CENTRAL = "org.relink.Central1"
PERIPHERAL = "org.relink.Peripheral1"
PERIPHERAL_MANAGER = "org.relink.PeripheralManager1"
PROPS = "org.freedesktop.DBus.Properties"


def die_with_parent() -> None:
    """PR_SET_PDEATHSIG(SIGKILL), in the child before exec."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def plain(value: Any) -> Any:
    if isinstance(value, Variant):
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class DBusCallError(Exception):
    def __init__(self, name: str, text: str):
        super().__init__(f"{name}: {text}")
        self.name = name
        self.text = text


class Caller:
    """A bus connection on its own event-loop thread, with blocking calls.
    Collects the signals it receives (for eavesdropping checks)."""

    def __init__(self, address: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.signals: list[Message] = []
        self.bus: MessageBus = self._run(self._connect(address), 10)

    async def _connect(self, address: str) -> MessageBus:
        bus = await MessageBus(bus_address=address, bus_type=BusType.SYSTEM).connect()

        def on(msg: Message) -> None:
            if msg.message_type == MessageType.SIGNAL:
                self.signals.append(msg)
        bus.add_message_handler(on)
        return bus

    def _run(self, coro, timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @property
    def unique_name(self) -> str:
        return self.bus.unique_name

    def message(self, msg: Message, timeout: float = 10.0) -> Message:
        return self._run(self.bus.call(msg), timeout)

    def call(self, path: str, interface: str, member: str, signature: str = "",
             body: Optional[list] = None, destination: str = "org.relink", timeout: float = 10.0) -> list:
        reply = self.message(Message(destination=destination, path=path, interface=interface,
                                     member=member, signature=signature, body=body or []), timeout)
        if reply.message_type == MessageType.ERROR:
            raise DBusCallError(reply.error_name or "?", reply.body[0] if reply.body else "")
        return plain(reply.body)

    def error_of(self, *args, **kwargs) -> Optional[str]:
        """The error name of a call, None when it succeeded."""
        try:
            self.call(*args, **kwargs)
            return None
        except DBusCallError as e:
            return e.name

    def get(self, path: str, interface: str, prop: str) -> Any:
        return self.call(path, PROPS, "Get", "ss", [interface, prop])[0]

    def add_match(self, rule: str) -> None:
        self.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s", [rule],
                  destination="org.freedesktop.DBus")

    def name_owner(self, name: str) -> Optional[str]:
        try:
            return self.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "s", [name],
                             destination="org.freedesktop.DBus")[0]
        except DBusCallError:
            return None

    # -- relinkd shortcuts ---------------------------------------------------------

    def identifiers(self) -> list[str]:
        return sorted(i for i, _ in self.call("/org/relink", MANAGER, "ListIdentifiers")[0])

    def events(self, identifier: str, after: int = 0, limit: int = 10000) -> list[tuple[int, str, dict]]:
        rows = self.call(central_path(identifier), CENTRAL, "Events", "tu", [after, limit])[0]
        return [(int(s), k, json.loads(p)) for s, k, p in rows]

    def central(self, identifier: str, prop: str) -> Any:
        return self.get(central_path(identifier), CENTRAL, prop)

    def close(self) -> None:
        try:
            self.bus.disconnect()
            self._run(self.bus.wait_for_disconnect(), 5)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def event_value(payload: dict) -> Optional[bytes]:
    """The value of a value-notified payload (list of bytes or hex)."""
    body = payload
    if len(body) == 1 and isinstance(next(iter(body.values())), dict):
        body = next(iter(body.values()))
    v = body.get("value")
    if isinstance(v, list):
        return bytes(v)
    if isinstance(v, str):
        return bytes.fromhex(v)
    return None


class Relinkd:
    """The relinkd binary on `bus` with its store in `state_dir`."""

    def __init__(self, bus: str, state_dir: str, log_path: str, extra: Optional[list[str]] = None):
        self.bus = bus
        self.state_dir = state_dir
        self.log_path = log_path
        self.extra = extra or []
        self.proc: Optional[subprocess.Popen] = None

    def start(self, timeout: float = 30.0) -> "Relinkd":
        if not os.access(RELINKD, os.X_OK):
            raise AssertionError(f"{RELINKD} missing: run 'swift build' first")
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "STATE_DIRECTORY",
                            "JOURNAL_STREAM", "DBUS_SESSION_BUS_ADDRESS")}
        env["RELINK_CONTROL_INTERFACE"] = "1"  # the tests use relinkd's test interface, Control1 (root only)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([RELINKD, "--bus-address", self.bus, "--state-directory", self.state_dir,
                                      "--log-destination", "stderr", "--log-level", "debug", *self.extra],
                                     stdout=log, stderr=log, env=env, preexec_fn=die_with_parent)
        log.close()
        probe = Caller(self.bus)
        try:
            def up() -> bool:
                if self.proc.poll() is not None:
                    raise AssertionError(f"relinkd exited with {self.proc.returncode}:\n{self.log_tail()}")
                return probe.error_of("/org/relink", PROPS, "Get", "ss", [MANAGER, "Version"], timeout=2) is None
            wait_until(up, timeout, "relinkd's Manager1 on the bus", 0.1)
        finally:
            probe.close()
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(10)

    def terminate(self) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()

    def log_tail(self, n: int = 40) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


class ExampleClient:
    """A Python example program run with --json; its lines collected as they come."""

    module = "relink_lock"
    directory = EXAMPLE

    def __init__(self, bus: str, identifier: str, *extra: str, argv_prefix: Optional[list[str]] = None,
                 python: str = VENV_PY, env: Optional[dict] = None, cwd: Optional[str] = None):
        argv = (argv_prefix or []) + [python, "-m", self.module, "--bus-address", bus,
                                       "--identifier", identifier, "--json", *extra]
        full_env = dict(env or os.environ)
        full_env.setdefault("PYTHONPATH", f"{self.directory}:{EXAMPLE_COMMON}")
        full_env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                                     cwd=cwd, preexec_fn=die_with_parent)
        self.lines: list[dict] = []
        self.cond = threading.Condition()
        self.stderr = b""
        self.readers = [threading.Thread(target=self._read, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for t in self.readers:
            t.start()

    def _read(self) -> None:
        assert self.proc.stdout
        for raw in self.proc.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                line = {"type": "garbage", "text": raw.decode("utf-8", "replace")}
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def _read_err(self) -> None:
        assert self.proc.stderr
        self.stderr = self.proc.stderr.read()

    def snapshot(self) -> list[dict]:
        with self.cond:
            return list(self.lines)

    def wait_for(self, pred: Callable[[dict], bool], timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if pred(line):
                        return line
                if self.proc.poll() is not None and not any(pred(l) for l in self.lines):
                    # give the reader a moment to drain the pipe
                    self.cond.wait(0.2)
                    if not any(pred(l) for l in self.lines):
                        raise AssertionError(f"client exited ({self.proc.returncode}) before {what}:\n"
                                             f"{self.dump()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"client: timed out waiting for {what}:\n{self.dump()}")
                self.cond.wait(min(left, 0.2))

    def events(self) -> list[dict]:
        return [l for l in self.snapshot() if l.get("type") == "event"]

    def dump(self) -> str:
        lines = [json.dumps(l)[:300] for l in self.lines[-40:]]
        return "\n".join(lines) + "\nstderr: " + self.stderr.decode("utf-8", "replace")[-2000:]

    def _drain(self) -> None:
        for t in self.readers:
            t.join(5)

    def kill9(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._drain()

    def terminate(self, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._drain()
        return code


class LockClient(ExampleClient):
    """examples/python-lock (relink_lock)."""


class BandClient(ExampleClient):
    """examples/python-band (relink_band)."""

    module = "relink_band"
    directory = BAND_EXAMPLE
