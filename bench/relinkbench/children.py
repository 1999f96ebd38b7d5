"""Child processes of the bench: started with PR_SET_PDEATHSIG, tagged by the
bench directory in their command line, stopped with TERM then KILL."""

import asyncio
import json
import os
import signal
import sys
from typing import Any, Callable, Optional

from .proc import preexec_die_with_parent


class Child:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Optional[str],
                 pipes: bool = False):
        self.name = name
        self.argv = argv
        self.env = env
        self.log_path = log_path
        self.pipes = pipes
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.log_file = None

    async def start(self) -> None:
        stderr = None
        if self.log_path is not None:
            self.log_file = open(self.log_path, "ab")
            stderr = self.log_file
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, env=self.env,
            stdin=asyncio.subprocess.PIPE if self.pipes else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if self.pipes else (stderr or None),
            stderr=stderr,
            preexec_fn=preexec_die_with_parent(os.getpid()),
            start_new_session=False)

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def kill(self) -> None:
        if self.running:
            self.proc.send_signal(signal.SIGKILL)

    async def stop(self, timeout: float = 2.0) -> None:
        if self.proc is None:
            return
        if self.running:
            if self.pipes and self.proc.stdin and not self.proc.stdin.is_closing():
                self.proc.stdin.close()
            try:
                self.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except asyncio.TimeoutError:
                self.kill()
        await self.proc.wait()
        if self.log_file:
            self.log_file.close()
            self.log_file = None


class LineChild(Child):
    """A child speaking JSON lines: requests on stdin, replies/events on stdout."""

    def __init__(self, name, argv, env, log_path, on_event: Callable[[dict], None]):
        super().__init__(name, argv, env, log_path, pipes=True)
        self.on_event = on_event
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.reader: Optional[asyncio.Task] = None

    async def start(self) -> None:
        await super().start()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.proc and self.proc.stdout
        while line := await self.proc.stdout.readline():
            try:
                msg = json.loads(line)
            except ValueError:
                print(f"bench: {self.name}: {line!r}", file=sys.stderr)
                continue
            rid = msg.get("id")
            if rid is not None and rid in self.pending:
                self.pending.pop(rid).set_result(msg)
            elif "event" in msg:
                self.on_event(msg)
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(RuntimeError(f"peripheral {self.name} exited"))
        self.pending.clear()
        self.on_event({"event": "exited", "peripheral": self.name})

    async def request(self, cmd: str, args: dict[str, Any], timeout: float = 5.0) -> dict:
        if not self.running or self.proc.stdin is None:
            raise RuntimeError(f"peripheral {self.name} is not running")
        self.next_id += 1
        rid = self.next_id
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        self.proc.stdin.write((json.dumps({**args, "id": rid, "cmd": cmd}) + "\n").encode())
        await self.proc.stdin.drain()
        return await asyncio.wait_for(fut, timeout)
