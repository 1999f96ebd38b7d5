"""Test helpers: a running bench (bench/run-bench as a child process) and an
interactive bluetoothctl on its private bus."""

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from typing import Any, Optional

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_BENCH = os.path.join(BENCH, "run-bench")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\x01|\x02|\r")


def bench_processes(marker: str) -> list[int]:
    """Pids of processes whose command line mentions `marker` (the bench dir)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmdline and int(entry) != os.getpid():
            pids.append(int(entry))
    return pids


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


class BenchProcess:
    def __init__(self, *args: str, timeout: float = 60.0):
        self.proc = subprocess.Popen([RUN_BENCH, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        ready = self._next_line(timeout)
        if ready.get("event") != "ready":
            self.stop()
            raise RuntimeError(f"bench did not start: {ready}")
        self.info = ready
        self.bus: str = ready["bus"]
        self.dir: str = ready["dir"]
        self.peripherals: dict[str, dict[str, Any]] = ready["peripherals"]

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _next_line(self, timeout: float) -> dict:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise RuntimeError("bench stdout closed")
        return json.loads(line)

    def cmd(self, cmd: str, timeout: float = 60.0, **args: Any) -> dict:
        """Send a command; return the reply; raise if ok is false."""
        reply = self.try_cmd(cmd, timeout=timeout, **args)
        if not reply.get("ok"):
            raise RuntimeError(f"{cmd} failed: {reply.get('error')}")
        return reply

    def try_cmd(self, cmd: str, timeout: float = 60.0, **args: Any) -> dict:
        self.next_id += 1
        rid = self.next_id
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps({"id": rid, "cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            msg = self._next_line(max(0.1, deadline - time.monotonic()))
            if msg.get("id") == rid:
                return msg

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["DBUS_SYSTEM_BUS_ADDRESS"] = self.bus
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        return env

    def address(self, name: str) -> str:
        return self.peripherals[name]["address"]

    def path(self, name: str) -> str:
        return self.peripherals[name]["device_path"]

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait()


class Bluetoothctl:
    """bluetoothctl with commands piped into its stdin and its output watched."""

    def __init__(self, bench: BenchProcess, controller: Optional[str] = None):
        self.proc = subprocess.Popen(["bluetoothctl"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=bench.env(), bufsize=0)
        self.output = ""
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.expect(r"Agent registered|\[bluetooth\]", timeout=15)
        # Every adapter of the bench is on the bus: make the central the default.
        # (A remote central of relinkd's peripheral role selects its own adapter.)
        central = controller or bench.info["central"]["address"]
        if controller is None:
            self.run(f"select {central}", rf"Controller {central} .*\[default\]", timeout=10)
        else:
            # Another adapter: select prints nothing when it is not the default yet.
            self.expect(rf"Controller {central}", timeout=10)
            self.send(f"select {central}")
            self.run("show", rf"Controller {central} \(public\)", timeout=10)

    def _read(self) -> None:
        assert self.proc.stdout
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            with self.cond:
                self.output += ANSI.sub("", chunk.decode("utf-8", "replace"))
                self.cond.notify_all()

    def send(self, line: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((line + "\n").encode())

    def mark(self) -> int:
        with self.cond:
            return len(self.output)

    def expect(self, pattern: str, timeout: float = 10.0, since: int = 0) -> re.Match:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = rx.search(self.output, since)
                if m:
                    return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"bluetoothctl: no {pattern!r} in:\n{self.output[since:][-3000:]}")
                self.cond.wait(left)

    def run(self, line: str, pattern: str, timeout: float = 10.0) -> re.Match:
        start = self.mark()
        self.send(line)
        return self.expect(pattern, timeout, since=start)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(3)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
