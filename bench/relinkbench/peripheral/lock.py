"""The lock: advertises "RLK-xxxx", GAP name "Front Door"; lock service with a
lock-state characteristic (read, notify: "locked"/"unlocked"), a command
characteristic (write, write-without-response: "lock"/"unlock") and a
firmware characteristic (write, write-without-response) that takes any
bytes and records every value it received, in order (issue 22 item 6:
transfers), in memory and, after `firmware_log`, in a file."""

from typing import Any

from .base import CommandError, Peripheral

LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_FIRMWARE = "8e7f1a03-4b2c-4d1e-9a3f-72656c696e6b"
MANUFACTURER_ID = 0xFFFF  # "no company", for tests
# Issue 22: a descriptor of each kind on the state, and an included service.
USER_DESCRIPTION = "00002901-0000-1000-8000-00805f9b34fb"
PRESENTATION_FORMAT = "00002904-0000-1000-8000-00805f9b34fb"
LOCK_CONFIG = "8e7f1aff-4b2c-4d1e-9a3f-72656c696e6b"   # vendor descriptor: auto-lock seconds
BATTERY = "0000180f-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"


class Lock(Peripheral):
    kind = "lock"

    def __init__(self, name: str, adapter: str, adv_name: str, gap_name: str, encrypted: bool = False):
        self.locked = True
        super().__init__(name, adapter, adv_name, gap_name)
        # The included service first: bluetoothd 5.66 adds an application's
        # services in order and fails an include of one not added yet
        # (gatt-database.c include_services(), docs/real-bluez.md).
        battery = self.add_service(BATTERY, primary=False)
        self.add_char(battery, BATTERY_LEVEL, ["read"], bytes([90]))
        svc = self.add_service(LOCK_SERVICE)
        # Issue 24: a real lock serves its state only over an encrypted
        # link (BlueZ's encrypt-read / encrypt-notify flags; patch 22 makes
        # the mock refuse an unpaired central as bluetoothd does).
        state_flags = ["read", "notify"] + (["encrypt-read", "encrypt-notify"] if encrypted else [])
        self.state_char = self.add_char(svc, LOCK_STATE, state_flags, self._state_bytes())
        self.command_char = self.add_char(svc, LOCK_COMMAND, ["write", "write-without-response"],
                                          on_write=self._on_command)
        self.firmware_char = self.add_char(svc, LOCK_FIRMWARE, ["write", "write-without-response"],
                                           on_write=self._on_firmware)
        self.firmware_count = 0
        self.firmware_bytes = 0
        self.firmware_log = None
        self.add_descriptor(self.state_char, USER_DESCRIPTION, ["read"], b"Lock state")
        # utf8s (0x19), exponent 0, unitless (0x2700), Bluetooth SIG namespace, no description
        self.add_descriptor(self.state_char, PRESENTATION_FORMAT, ["read"], bytes([0x19, 0, 0x00, 0x27, 0x01, 0, 0]))
        self.add_descriptor(self.state_char, LOCK_CONFIG, ["read", "write"], bytes([30]))
        svc.includes = [battery.path]

    def advertised_uuids(self) -> list[str]:
        return [LOCK_SERVICE]

    def manufacturer_data(self) -> dict[int, bytes]:
        return {MANUFACTURER_ID: b"RL\x01"}

    def _state_bytes(self) -> bytes:
        return b"locked" if self.locked else b"unlocked"

    def set_locked(self, locked: bool) -> None:
        self.locked = locked
        # Notify even when unchanged: a push is a notification.
        self.state_char.set_value(self._state_bytes())

    async def _on_command(self, value: bytes, options: dict) -> None:
        text = value.decode("utf-8", "replace").strip().lower()
        if text not in ("lock", "unlock"):
            from dbus_fast import DBusError
            raise DBusError("org.bluez.Error.Failed", f"unknown lock command {text!r}")
        self.set_locked(text == "lock")
        self.emit({"event": "lock_command", "peripheral": self.name, "command": text})

    async def _on_firmware(self, value: bytes, options: dict) -> None:
        self.firmware_count += 1
        self.firmware_bytes += len(value)
        if self.firmware_log is not None:
            # One record per value: its length (4 bytes, little-endian), its bytes.
            self.firmware_log.write(len(value).to_bytes(4, "little") + value)
            self.firmware_log.flush()

    def state(self) -> dict[str, Any]:
        return {"locked": self.locked, "state": self._state_bytes().decode(),
                "writes": self.command_char.writes, "confirms": self.state_char.confirms,
                "notify_on_subscribe": self.state_char.notify_on_subscribe,
                "firmware_writes": self.firmware_count, "firmware_bytes": self.firmware_bytes}

    async def command(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        if cmd == "push":
            if "state" in args:
                if args["state"] not in ("locked", "unlocked"):
                    raise CommandError("state must be 'locked' or 'unlocked'")
                self.set_locked(args["state"] == "locked")
            elif "value" in args:
                silent = args.get("silent", False)
                if not isinstance(silent, bool):
                    raise CommandError("silent must be true or false")
                self.state_char.set_value(bytes.fromhex(str(args["value"])), notify=not silent)
            else:
                self.set_locked(self.locked)
            return {"value": self.state_char.value.hex()}
        if cmd == "firmware_log":
            path = args.get("path")
            if not isinstance(path, str) or not path:
                raise CommandError("path must be a file path")
            if self.firmware_log is not None:
                self.firmware_log.close()
            self.firmware_log = open(path, "wb")
            self.firmware_count = self.firmware_bytes = 0
            return {"path": path}
        if cmd == "notify_on_subscribe":
            on = args.get("on")
            if not isinstance(on, bool):
                raise CommandError("on must be true or false")
            self.state_char.notify_on_subscribe = on
            return {"notify_on_subscribe": on}
        return await super().command(cmd, args)
