"""The band: heart-rate-like service 0x180D; 0x2A37 notifies at a set rate.
Payload: flags (0x00), heart rate (uint8), then a uint32 little-endian counter
that grows by one per value, so lost or doubled notifications show."""

import asyncio
import struct
from typing import Any

from .base import CommandError, Peripheral

HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
# Issue 22: a descriptor of each kind on the sensor location, and an included service.
USER_DESCRIPTION = "00002901-0000-1000-8000-00805f9b34fb"
PRESENTATION_FORMAT = "00002904-0000-1000-8000-00805f9b34fb"
BAND_CONFIG = "8e7f2aff-4b2c-4d1e-9a3f-72656c696e6b"   # vendor descriptor: sampling interval
BATTERY = "0000180f-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"


def encode(counter: int, bpm: int) -> bytes:
    return struct.pack("<BBI", 0, bpm & 0xFF, counter & 0xFFFFFFFF)


def decode(value: bytes) -> tuple[int, int]:
    """(heart rate, counter) of a measurement."""
    _, bpm, counter = struct.unpack("<BBI", bytes(value)[:6])
    return bpm, counter


class Band(Peripheral):
    kind = "band"

    def __init__(self, name: str, adapter: str, adv_name: str, gap_name: str,
                 rate: float = 2.0, streaming: bool = True):
        super().__init__(name, adapter, adv_name, gap_name)
        # The included service first: bluetoothd 5.66 adds an application's
        # services in order and fails an include of one not added yet
        # (gatt-database.c include_services(), docs/real-bluez.md).
        battery = self.add_service(BATTERY, primary=False)
        self.add_char(battery, BATTERY_LEVEL, ["read"], bytes([80]))
        svc = self.add_service(HEART_RATE)
        self.counter = 0
        self.bpm = 60
        self.rate = rate
        self.streaming = streaming
        self.hrm = self.add_char(svc, HR_MEASUREMENT, ["notify"], encode(0, self.bpm))
        location = self.add_char(svc, BODY_SENSOR_LOCATION, ["read"], b"\x02")  # wrist
        self.add_descriptor(location, USER_DESCRIPTION, ["read"], b"Sensor location")
        # uint8 (0x04), exponent 0, unitless (0x2700), Bluetooth SIG namespace, no description
        self.add_descriptor(location, PRESENTATION_FORMAT, ["read"], bytes([0x04, 0, 0x00, 0x27, 0x01, 0, 0]))
        self.add_descriptor(location, BAND_CONFIG, ["read", "write"], bytes([1]))
        svc.includes = [battery.path]
        self.task = None

    def advertised_uuids(self) -> list[str]:
        return [HEART_RATE]

    def service_data(self) -> dict[str, bytes]:
        return {HEART_RATE: b"\x01"}

    def push(self) -> None:
        self.counter += 1
        self.bpm = 60 + (self.counter % 40)
        self.hrm.set_value(encode(self.counter, self.bpm))

    async def _stream(self) -> None:
        while True:
            await asyncio.sleep(1.0 / self.rate)
            if self.streaming:
                self.push()

    async def started(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._stream())

    def state(self) -> dict[str, Any]:
        return {"counter": self.counter, "bpm": self.bpm, "rate": self.rate,
                "streaming": self.streaming, "confirms": self.hrm.confirms}

    async def command(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        if cmd == "push":
            self.push()
            return {"counter": self.counter}
        if cmd == "start_stream":
            if "rate" in args:
                self._set_rate(args["rate"])
            self.streaming = True
            return {"streaming": True, "rate": self.rate}
        if cmd == "stop_stream":
            self.streaming = False
            return {"streaming": False, "counter": self.counter}
        if cmd == "set_rate":
            self._set_rate(args.get("rate"))
            return {"rate": self.rate}
        return await super().command(cmd, args)

    def _set_rate(self, rate: Any) -> None:
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 < rate <= 200:
            raise CommandError("rate must be a number of notifications per second in (0, 200]")
        self.rate = float(rate)
