"""A D-Bus client the two-user test runs under another UID (setpriv). Only
dbus-fast and the standard library, so it runs from a world-readable copy.

  python other_user_client.py BUS_ADDRESS

Reads one JSON request per line on stdin, answers one JSON line on stdout:
  {"op": "call", "path", "interface", "member", "signature", "body", "destination"?}
      -> {"ok": body} or {"error": name, "message": text}
  {"op": "signals"} -> {"signals": [{path, interface, member, sender, destination, body}]}
  {"op": "whoami"}  -> {"uid": ..., "unique_name": ...}
  {"op": "fuzz", "seed", "count", "generator": {Generator's arguments}}
      -> {"replies": [error name, or null for a success, or "no-reply"], "seconds": ...}
      (the calls of e2e_fuzzgen.Generator for that seed)
Variants in a body are written {"$v": [signature, value]}, byte arrays {"$b": hex}."""

import asyncio
import json
import os
import sys

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus


def to_dbus(value):
    if isinstance(value, dict):
        if set(value) == {"$v"}:
            sig, inner = value["$v"]
            return Variant(sig, to_dbus(inner))
        if set(value) == {"$b"}:
            return bytes.fromhex(value["$b"])
        return {k: to_dbus(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_dbus(v) for v in value]
    return value


def to_json(value):
    if isinstance(value, Variant):
        return to_json(value.value)
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, bytes):
        return list(value)
    return value


async def fuzz(bus: MessageBus, req: dict) -> dict:
    import random
    import time
    from e2e_fuzzgen import Generator
    gen = Generator(random.Random(req["seed"]), **req["generator"])
    calls = [gen.next() for _ in range(req["count"])]
    replies: list = [None] * len(calls)
    room = asyncio.Condition()
    state = {"calls": 0, "bytes": 0}
    started = time.monotonic()

    async def one(i, c):
        # at most 16 calls and 64 KiB in flight: dbus-fast 5.2 drops its
        # connection when the socket's send buffer is full (EAGAIN)
        msg = Message(destination="org.relink", path=c.path, interface=c.interface, member=c.member,
                      signature=c.signature, body=c.body)
        size = len(msg._marshall(False))
        async with room:
            await room.wait_for(lambda: state["calls"] == 0 or (
                state["calls"] < 16 and state["bytes"] + size <= 65536))
            state["calls"] += 1
            state["bytes"] += size
        try:
            reply = await asyncio.wait_for(bus.call(msg), 30)
            replies[i] = reply.error_name if reply.message_type == MessageType.ERROR else None
        except asyncio.TimeoutError:
            replies[i] = "no-reply"
        finally:
            async with room:
                state["calls"] -= 1
                state["bytes"] -= size
                room.notify_all()
    await asyncio.gather(*(one(i, c) for i, c in enumerate(calls)))
    return {"replies": replies, "seconds": time.monotonic() - started}


async def main(address: str) -> None:
    bus = await MessageBus(bus_address=address, bus_type=BusType.SYSTEM).connect()
    signals = []

    def on(msg: Message) -> None:
        if msg.message_type == MessageType.SIGNAL:
            signals.append({"path": msg.path, "interface": msg.interface, "member": msg.member,
                            "sender": msg.sender, "destination": msg.destination, "body": to_json(msg.body)})
    bus.add_message_handler(on)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        req = json.loads(line)
        if req["op"] == "whoami":
            out = {"uid": os.getuid(), "unique_name": bus.unique_name}
        elif req["op"] == "fuzz":
            out = await fuzz(bus, req)
        elif req["op"] == "signals":
            await asyncio.sleep(req.get("settle", 0))
            out = {"signals": list(signals)}
        else:
            try:
                reply = await asyncio.wait_for(bus.call(Message(
                    destination=req.get("destination", "org.relink"), path=req["path"],
                    interface=req["interface"], member=req["member"], signature=req.get("signature", ""),
                    body=to_dbus(req.get("body", [])))), 10)
                if reply.message_type == MessageType.ERROR:
                    out = {"error": reply.error_name, "message": reply.body[0] if reply.body else ""}
                else:
                    out = {"ok": to_json(reply.body)}
            except Exception as e:  # reported to the test, which fails on it
                out = {"error": "client:" + type(e).__name__, "message": str(e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    bus.disconnect()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
