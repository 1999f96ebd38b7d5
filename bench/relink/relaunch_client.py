"""The program relaunch_bench.py has the bus start (its activation file's
Exec=): owns its bus name, registers its identifier with relinkd, and, when
the value it is told to wait for arrives as an Event, appends
`VALUE MONOTONIC_NS` to OUT, acknowledges and exits. CLOCK_MONOTONIC is the
same for every process of the machine, so the bench compares it with its own.

  python relaunch_client.py BUS NAME IDENTIFIER OUT
"""

import asyncio
import json
import sys
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

from relinkd_client import central_path


async def main(bus_address: str, name: str, identifier: str, out: str) -> int:
    bus = await MessageBus(bus_address=bus_address, bus_type=BusType.SYSTEM).connect()
    done = asyncio.get_running_loop().create_future()
    # Known before Register: relinkd sends the replayed events right after
    # its reply, and this handler can see them before the code awaiting the
    # reply runs (a path taken from the reply missed the event now and then).
    central = central_path(identifier)

    def on_message(msg: Message) -> None:
        if msg.message_type == MessageType.SIGNAL and msg.member == "Event" and msg.path == central:
            sequence, kind, payload = msg.body
            if kind == "value-notified" and not done.done():
                value = bytes(json.loads(payload)["valueNotified"]["value"]).decode("utf-8", "replace")
                done.set_result((value, time.monotonic_ns(), sequence))
    bus.add_message_handler(on_message)
    await bus.request_name(name)
    reply = await bus.call(Message(destination="org.relink", path="/org/relink", interface="org.relink.Manager1",
                                   member="Register", signature="sa{sv}", body=[identifier, {}]))
    if reply.message_type == MessageType.ERROR:
        print(f"Register: {reply.error_name} {reply.body}", file=sys.stderr)
        return 1
    assert reply.body[0] == central, reply.body
    value, stamp, sequence = await asyncio.wait_for(done, 30)
    with open(out, "a") as f:
        f.write(f"{value} {stamp} {'launch_reason' in reply.body[1]}\n")
    await bus.call(Message(destination="org.relink", path=central, interface="org.relink.Central1",
                           member="Ack", signature="t", body=[sequence]))
    bus.disconnect()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:5])))
