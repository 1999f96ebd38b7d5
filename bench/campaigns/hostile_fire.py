"""Sending the hostile calls campaign's calls (bench/campaigns/hostile.py):
over several connections at once, pipelined, with file descriptors. Only
dbus-fast and the standard library, so that the campaign can run it under
another Unix user from a world-readable copy:

  python hostile_fire.py BUS_ADDRESS < pickled (calls, seed, connections, timeout) > pickled replies

A call is (path, interface, member, signature, body, descriptors); a reply
is (is_error, name, text), or None when none came within the timeout."""

from __future__ import annotations

import asyncio
import os
import pickle
import random
import sys
import tempfile
from typing import Callable, Optional

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

IN_FLIGHT = 64
#: dbus-fast 5.2 drops its connection when the socket's send buffer is full
#: (it does not handle EAGAIN): at most this many bytes in flight per connection.
IN_FLIGHT_BYTES = 64 * 1024

Wire = tuple  # (path, interface, member, signature, body, descriptors)
Reply = Optional[tuple[bool, str, str]]


def message(call: Wire, fds: list[int]) -> Message:
    path, interface, member, signature, body, _ = call
    return Message(destination="org.relink", path=path, interface=interface, member=member,
                   signature=signature, body=body, unix_fds=fds)


class Descriptors:
    """Descriptors to send: /dev/null, a file, a pipe's ends; the bus passes
    copies, so they stay open here until closed."""

    def __init__(self) -> None:
        fd, path = tempfile.mkstemp(prefix="relink-hostile-")
        os.write(fd, b"\x01" * 4096)
        os.close(fd)
        r, w = os.pipe()
        self.fds = [os.open("/dev/null", os.O_RDONLY), os.open(path, os.O_RDONLY), r, w]
        os.unlink(path)

    def pick(self, rng: random.Random, n: int) -> list[int]:
        return [rng.choice(self.fds) for _ in range(n)]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


async def fire(bus_address: str, calls: list[Wire], seed: int, connections: int, timeout: float,
               on_done: Optional[Callable[[int], None]] = None) -> list[Reply]:
    """Sends the calls over `connections` connections at once (call i on
    connection i mod n, in order), each with at most IN_FLIGHT calls and
    IN_FLIGHT_BYTES in flight; `on_done(n)` after each reply. Each
    connection's calls are taken by IN_FLIGHT senders in turn, so a reply
    wakes at most those (a waiter per call made 100,000 calls quadratic)."""
    rng = random.Random(seed)
    fds = Descriptors()
    buses = [await MessageBus(bus_address=bus_address, bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
             for _ in range(connections)]
    replies: list[Reply] = [None] * len(calls)
    done = [0]

    async def connection(k: int) -> None:
        bus, room, state = buses[k], asyncio.Condition(), {"bytes": 0, "calls": 0}
        queue = iter(range(k, len(calls), len(buses)))

        async def sender() -> None:
            for i in queue:
                msg = message(calls[i], fds.pick(rng, calls[i][5]))
                size = len(msg._marshall(True))
                async with room:
                    await room.wait_for(lambda: state["calls"] == 0 or state["bytes"] + size <= IN_FLIGHT_BYTES)
                    state["calls"] += 1
                    state["bytes"] += size
                try:
                    reply = await asyncio.wait_for(bus.call(msg), timeout)
                    is_error = reply.message_type == MessageType.ERROR
                    text = reply.body[0] if is_error and reply.body and isinstance(reply.body[0], str) else ""
                    replies[i] = (is_error, reply.error_name or "", text)
                except asyncio.TimeoutError:
                    replies[i] = None
                finally:
                    async with room:
                        state["calls"] -= 1
                        state["bytes"] -= size
                        room.notify_all()
                    done[0] += 1
                    if on_done:
                        on_done(done[0])
        await asyncio.gather(*(sender() for _ in range(IN_FLIGHT)))
    try:
        await asyncio.gather(*(connection(k) for k in range(len(buses))))
    finally:
        for bus in buses:
            bus.disconnect()
        fds.close()
    return replies


def main() -> None:
    calls, seed, connections, timeout = pickle.load(sys.stdin.buffer)
    replies = asyncio.run(fire(sys.argv[1], calls, seed, connections, timeout))
    pickle.dump((os.getuid(), replies), sys.stdout.buffer)


if __name__ == "__main__":
    main()
