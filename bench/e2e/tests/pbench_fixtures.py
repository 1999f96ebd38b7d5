"""What the peripheral-role bench tests share (issue 23): a bench with a
remote-central adapter, relinkd on hci0, the published service and the
advertisement, and a remote central that finds them."""

from __future__ import annotations

import os
import shutil
import tempfile

from benchproc import BenchProcess
from e2e_harness import Relinkd, wait_until
from remote_central import PeripheralProgram, RemoteCentral, full_uuid

IDENTIFIER = "org.example.hub"
SERVICE = "8e7f3a00-4b2c-4d1e-9a3f-72656c696e6b"
STATIC = "2a24"                                      # read, value "S1"
CACHED = "2a19"                                      # read, notify, cacheable
DYNAMIC = "8e7f3a01-4b2c-4d1e-9a3f-72656c696e6b"     # read, answered by the program
COMMAND = "8e7f3a02-4b2c-4d1e-9a3f-72656c696e6b"     # write, write without response
STREAM = "8e7f3a03-4b2c-4d1e-9a3f-72656c696e6b"      # notify
LOCAL_NAME = "Hub-1"
RELINKD_ADDRESS = "00:00:00:00:00:01"                # hci0, relinkd's adapter

HUB_SERVICE = {
    "uuid": SERVICE, "primary": True,
    "characteristics": [
        {"uuid": STATIC, "properties": ["read"], "permissions": ["readable"], "value": list(b"S1")},
        {"uuid": CACHED, "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": True},
        {"uuid": DYNAMIC, "properties": ["read"], "permissions": ["readable"]},
        {"uuid": COMMAND, "properties": ["write", "writeWithoutResponse"], "permissions": ["writeable"]},
        {"uuid": STREAM, "properties": ["notify"], "permissions": ["readable"]},
    ],
}
HUB_ADVERTISEMENT = {"localName": LOCAL_NAME, "serviceUUIDs": [SERVICE], "discoverable": True, "connectable": True}


def start_bench() -> BenchProcess:
    """hci0 for relinkd, hci1 for the remote central (an adapter with no program)."""
    return BenchProcess("--remote-central", "remote")


class Hub:
    """relinkd with a fresh store, the program that published the hub, and the remote central."""

    def __init__(self, bench: BenchProcess):
        self.bench = bench
        self.dir = tempfile.mkdtemp(prefix="relink-pbench-")
        self.relinkd = Relinkd(bench.bus, os.path.join(self.dir, "state"), os.path.join(self.dir, "relinkd.log"))
        self.relinkd.start()
        self.program: PeripheralProgram | None = PeripheralProgram(bench.bus, IDENTIFIER)
        self.program.publish(HUB_SERVICE)
        self.program.advertise(HUB_ADVERTISEMENT)
        self.central = RemoteCentral(bench.bus, bench.peripherals["remote"]["adapter"])

    def path(self, characteristic: str) -> str:
        return self.central.char_path(RELINKD_ADDRESS, SERVICE, characteristic)

    def connect(self) -> None:
        self.central.discover(LOCAL_NAME)
        self.central.connect(RELINKD_ADDRESS)
        wait_until(lambda: full_uuid(SERVICE) in self.central.services(RELINKD_ADDRESS), 15,
                   "the hub's service on the remote central")

    def close(self) -> None:
        self.central.disconnect(RELINKD_ADDRESS)
        self.central.close()
        if self.program is not None:
            self.program.close()
        self.relinkd.kill9()
        shutil.rmtree(self.dir, ignore_errors=True)
