"""bleak (a third-party central library) as the remote central of relinkd's
peripheral role, in a process of its own (DBUS_SYSTEM_BUS_ADDRESS is the
bench's bus):
  python bleak_central.py ADAPTER LOCAL_NAME STATIC COMMAND STREAM COUNT
Finds the advertisement, connects, reads STATIC, writes b"\\x09" to COMMAND
with response, subscribes to STREAM and waits for COUNT notifications.
Prints one JSON line per step."""

import asyncio
import json
import sys

from bleak import BleakClient, BleakScanner


def out(**fields) -> None:
    print(json.dumps(fields), flush=True)


async def main(adapter: str, name: str, static: str, command: str, stream: str, count: int) -> None:
    bluez = {"adapter": adapter}
    device = await BleakScanner.find_device_by_name(name, timeout=20, bluez=bluez)
    if device is None:
        out(event="error", error=f"{name} not found")
        return
    out(event="found", address=device.address)
    async with BleakClient(device, bluez=bluez) as client:
        out(event="services", services=sorted(s.uuid for s in client.services))
        out(event="read", value=(await client.read_gatt_char(static)).hex())
        await client.write_gatt_char(command, b"\x09", response=True)
        out(event="written")
        got: list[str] = []
        done = asyncio.Event()

        def on_value(_, data: bytearray) -> None:
            got.append(bytes(data).hex())
            if len(got) >= count:
                done.set()
        await client.start_notify(stream, on_value)
        out(event="subscribed")
        await asyncio.wait_for(done.wait(), 20)
        out(event="notified", values=got)


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(main(a[0], a[1], a[2], a[3], a[4], int(a[5])))
