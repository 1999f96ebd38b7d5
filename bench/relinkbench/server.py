"""Serves the control protocol on stdin/stdout and on DIR/control.sock."""

import asyncio
import json
import os
import sys
import threading
from typing import Callable

from .commands import Dispatcher


def write_stdout(obj: dict) -> None:
    """One JSON line to whoever started the bench. A reader that has gone
    (a test process that ended first) is not an error at this end: the line
    has nobody to reach, and the bench goes on stopping cleanly."""
    try:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # Keep the interpreter from failing again when it flushes at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def read_stdin(loop: asyncio.AbstractEventLoop, on_line: Callable[[str], None],
               on_eof: Callable[[], None]) -> None:
    """Read stdin in a thread (works for pipes, terminals and files alike);
    hand each line to the loop, and EOF too."""
    def run():
        for line in sys.stdin:
            loop.call_soon_threadsafe(on_line, line)
        loop.call_soon_threadsafe(on_eof)
    threading.Thread(target=run, name="stdin", daemon=True).start()


class StdinServer:
    """Commands from stdin are handled one after another; replies go to stdout."""

    def __init__(self, dispatcher: Dispatcher, on_eof: Callable[[], None]):
        self.dispatcher = dispatcher
        self.queue: asyncio.Queue = asyncio.Queue()
        self.on_eof = on_eof

    def start(self) -> asyncio.Task:
        loop = asyncio.get_running_loop()
        read_stdin(loop, self.queue.put_nowait, lambda: self.queue.put_nowait(None))
        return loop.create_task(self._serve())

    async def _serve(self) -> None:
        while (line := await self.queue.get()) is not None:
            if line.strip():
                write_stdout(await self.dispatcher.handle_line(line))
        self.on_eof()


async def serve_socket(dispatcher: Dispatcher, path: str) -> asyncio.AbstractServer:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while line := await reader.readline():
                if line.strip():
                    reply = await dispatcher.handle_line(line.decode("utf-8", "replace"))
                    writer.write((json.dumps(reply) + "\n").encode())
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_unix_server(client, path=path)
    os.chmod(path, 0o600)
    return server
