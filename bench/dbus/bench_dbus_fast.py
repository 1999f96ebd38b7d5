"""dbus-fast's side of the D-Bus benchmark (see run.sh); same modes as bench.c.

  serve   ADDRESS NAME READYFILE   answer Ping(s) -> s
  call    ADDRESS NAME COUNT       sequential Ping calls; prints calls_per_sec
  receive ADDRESS COUNT READYFILE  count Tick signals; prints signals_per_sec
"""
import asyncio
import sys
import time

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method


class Bench(ServiceInterface):
    def __init__(self):
        super().__init__("org.relink.Bench")

    @method()
    def Ping(self, s: "s") -> "s":  # noqa: N802,F821
        return s


def ready(path):
    with open(path, "w") as f:
        f.write("ready\n")


async def main(argv):
    mode, address = argv[1], argv[2]
    bus = await MessageBus(bus_address=address).connect()
    if mode == "serve":
        bus.export("/bench", Bench())
        await bus.request_name(argv[3])
        ready(argv[4])
        await bus.wait_for_disconnect()
    elif mode == "call":
        name, n = argv[3], int(argv[4])
        t0 = time.monotonic()
        for _ in range(n):
            reply = await bus.call(
                Message(destination=name, path="/bench", interface="org.relink.Bench", member="Ping",
                        signature="s", body=["hello"]))
            if reply.message_type != MessageType.METHOD_RETURN or reply.body[0] != "hello":
                sys.exit("bad reply")
        print(f"calls_per_sec={n / (time.monotonic() - t0):.0f}")
    elif mode == "receive":
        n = int(argv[3])
        done = asyncio.get_running_loop().create_future()
        state = {"got": 0, "t0": 0.0}

        def handler(msg):
            if msg.message_type == MessageType.SIGNAL and msg.member == "Tick" and msg.interface == "org.relink.Bench":
                seq = msg.body[0]
                if seq != state["got"]:
                    sys.exit(f"out of order: {seq} at {state['got']}")
                if state["got"] == 0:
                    state["t0"] = time.monotonic()
                state["got"] += 1
                if state["got"] == n and not done.done():
                    done.set_result(time.monotonic())

        bus.add_message_handler(handler)
        await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                               interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                               body=["type='signal',interface='org.relink.Bench',member='Tick'"]))
        ready(argv[4])
        t1 = await done
        print(f"signals_per_sec={(n - 1) / (t1 - state['t0']):.0f}")
    bus.disconnect()


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
