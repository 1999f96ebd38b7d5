"""The client of relay.c in the restoration benchmark, in a process of its own
as the other contenders' clients are; with relay.c, the floor for any agent
between bluetoothd and its client (no store, no numbering, no checks).

  python relay_client.py --bus ADDRESS --device DEVICE_PATH

Keeps the link up the least costly way: a `Connect()` at once, and again at
once whenever it fails or the link drops (BlueZ holds a pending Connect until
the device is in range or its connect timeout ends). relay.c's notify
session, which bluetoothd keeps across a reconnection, brings the values;
this process takes them as relay.c's unicast Value(ay) signals.

Prints one JSON object per line on stdout, flushed:
  {"ev": "name", "name": UNIQUE_NAME}     (first: where relay.c sends values)
  {"ev": "connected"} | {"ev": "disconnected"}
  {"ev": "value", "hex": H, "t": MONOTONIC}
"""

import argparse
import asyncio
import json
import sys
import time

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus


def emit(ev: str, **fields) -> None:
    sys.stdout.write(json.dumps({"ev": ev, **fields}) + "\n")
    sys.stdout.flush()


class Client:
    def __init__(self, bus: MessageBus, device: str):
        self.bus = bus
        self.device = device
        self.down = asyncio.Event()
        self.down.set()

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.interface == "org.relink.bench.Relay" and msg.member == "Value":
            value = bytes(msg.body[0])
            emit("value", hex=value.hex(), t=time.monotonic())
        elif (msg.member == "PropertiesChanged" and msg.path == self.device and msg.body
              and msg.body[0] == "org.bluez.Device1"):
            connected = msg.body[1].get("Connected")
            if connected is not None and connected.value is False and not self.down.is_set():
                self.down.set()
                emit("disconnected")

    async def keep_link(self) -> None:
        while True:
            await self.down.wait()
            reply = await self.bus.call(Message(destination="org.bluez", path=self.device,
                                                interface="org.bluez.Device1", member="Connect"))
            if reply.message_type == MessageType.ERROR and reply.error_name != "org.bluez.Error.AlreadyConnected":
                await asyncio.sleep(0.01)  # not in range within BlueZ's timeout: again
                continue
            self.down.clear()
            emit("connected")

    async def run(self) -> None:
        self.bus.add_message_handler(self.on_message)
        reply = await self.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
            member="AddMatch", signature="s",
            body=[f"type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                  f"member='PropertiesChanged',path='{self.device}'"]))
        if reply.message_type == MessageType.ERROR:
            sys.exit(f"AddMatch: {reply.body}")
        emit("name", name=self.bus.unique_name)
        await self.keep_link()


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bus", required=True)
    p.add_argument("--device", required=True, help="the lock's Device1 object path")
    args = p.parse_args()
    bus = await MessageBus(bus_address=args.bus, bus_type=BusType.SYSTEM).connect()
    await Client(bus, args.device).run()


if __name__ == "__main__":
    asyncio.run(main())
