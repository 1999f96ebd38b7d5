"""The lock's side of a pairing on real bluetoothd (issue 24), for guest tests.

A real lock's firmware accepts a Just Works pairing by itself. On the bench
one bluetoothd owns the central's adapter (hci0) and the lock's (hci1), and
bluetoothd asks the responder's side of an LE pairing through its *default*
agent (`RequestAuthorization`: the kernel's JUST_CFM for an incoming Just
Works pairing; relinkd's agent is never the default one). So the bench runs
this program: a NoInputNoOutput agent registered as the default agent that
accepts every request and prints one JSON line per request, so a test counts
the pairings the lock was asked for. It registers again whenever org.bluez
gets a new owner (a restarted bluetoothd has no agents).

Being the default agent of that bluetoothd also makes bluetoothd give both
adapters the agent's capability (NoInputNoOutput unless a test names another:
test_pairing_models_guest.py's DisplayOnly and DisplayYesNo locks) and keep
them bondable, as any desktop's agent (bluetoothctl's `default-agent`) does.
A pairing relinkd starts names its own capability for hci0's side
(`Device1.Pair` with relinkd's agent), so the lock's side alone takes this
one: the passkey bluetoothd gives it to show (`DisplayPasskey`) is in
`displayed()`."""

import json
import os
import subprocess
import sys
import threading
from typing import Optional

AGENT = r"""
import asyncio, json, sys
CAPABILITY = sys.argv[1] if len(sys.argv) > 1 else "NoInputNoOutput"
from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method

PATH = "/org/relink/bench/lockagent"

def say(**fields):
    print(json.dumps(fields), flush=True)

class Agent(ServiceInterface):
    def __init__(self):
        super().__init__("org.bluez.Agent1")
    @method()
    def Release(self): say(event="release")
    @method()
    def Cancel(self): say(event="cancel")
    @method()
    def RequestAuthorization(self, device: "o"): say(event="request", kind="authorization", device=device)
    @method()
    def RequestConfirmation(self, device: "o", passkey: "u"):
        say(event="request", kind="confirmation", device=device, passkey=passkey)
    @method()
    def AuthorizeService(self, device: "o", uuid: "s"): say(event="request", kind="service", device=device)
    @method()
    def RequestPasskey(self, device: "o") -> "u":
        say(event="request", kind="passkey", device=device); return 0
    @method()
    def DisplayPasskey(self, device: "o", passkey: "u", entered: "q"):
        say(event="display", device=device, passkey=passkey, entered=entered)

async def register(bus):
    for member in ("RegisterAgent", "RequestDefaultAgent"):
        body = [PATH, CAPABILITY] if member == "RegisterAgent" else [PATH]
        r = await bus.call(Message(destination="org.bluez", path="/org/bluez", interface="org.bluez.AgentManager1",
                                   member=member, signature="os" if len(body) == 2 else "o", body=body))
        ok = r.message_type == MessageType.METHOD_RETURN or r.error_name == "org.bluez.Error.AlreadyExists"
        if not ok:
            say(event="register-failed", member=member, error=r.error_name)
            return False
    say(event="registered", capability=CAPABILITY)
    return True

async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    bus.export(PATH, Agent())
    owner = asyncio.Event()
    def on_message(msg):
        if msg.member == "NameOwnerChanged" and msg.body and msg.body[0] == "org.bluez" and msg.body[2]:
            owner.set()
    bus.add_message_handler(on_message)
    await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                           interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                           body=["type='signal',member='NameOwnerChanged',arg0='org.bluez'"]))
    owner.set()
    while True:
        await owner.wait()
        owner.clear()
        # bluetoothd may own its name a moment before its agent manager is there.
        for _ in range(100):
            if await register(bus):
                break
            await asyncio.sleep(0.2)  # the agent program's own retry (100 tries), not a test's wait

asyncio.run(main())
"""


class LockAgent:
    """The lock side's default agent (a child process); `requests()` are the
    pairing requests it was asked so far, `displayed()` the passkeys
    bluetoothd gave it to show. `capability`: another I/O capability, which
    bluetoothd gives every adapter while this is its default agent (the
    lock's side of a passkey entry or numeric comparison; relinkd's pairing
    names its own for hci0's side)."""

    def __init__(self, log_path: str, capability: str = "NoInputNoOutput"):
        self.log_path = log_path
        self.lines: list[dict] = []
        self.lock = threading.Lock()
        self.proc = subprocess.Popen([sys.executable, "-c", AGENT, capability], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with open(self.log_path, "a") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                with self.lock:
                    self.lines.append(item)

    def registrations(self) -> int:
        with self.lock:
            return sum(1 for l in self.lines if l.get("event") == "registered")

    def requests(self) -> list[dict]:
        with self.lock:
            return [l for l in self.lines if l.get("event") == "request"]

    def displayed(self) -> list[int]:
        with self.lock:
            return [l["passkey"] for l in self.lines if l.get("event") == "display" and "passkey" in l]

    def stop(self) -> Optional[int]:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def log_path(logdir: str) -> str:
    return os.path.join(logdir, "lock-agent.log")
