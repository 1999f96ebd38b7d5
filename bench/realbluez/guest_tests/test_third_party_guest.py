"""relinkd with a peripheral the project did not write, on real bluetoothd
5.66, inside the VM: BlueZ's own example-gatt-server (heart rate 0x180D with
its measurement 0x2A37, battery 0x180F with its level 0x2A19) and
example-advertisement (0x180D, 0x180F, "TestAdvertisement"), from Debian's
bluez-test-scripts, unmodified, on hci1; relinkd on hci0.

The scripts register on the first adapter bluetoothd lists. They run
unchanged; a small loader (LOADER below) executes each script without its
`__main__` block, replaces its `find_adapter` with one returning hci1, and
calls its `main()`.

relinkd finds the band the way an application would: a scan for 0x180D
(`discovered`), then Connect to the peripheral found, with `--service
180d`, and a subscription to 0x2A37: values arrive; again after relinkd is
SIGKILLed and started, and after bluetoothd is SIGKILLed and SIGTERMed and
started again. The peripheral is another device in real life, unaffected by
the gateway's bluetoothd; here it shares the VM's bluetoothd, so after each
bluetoothd restart its two programs are started again, as the bench does with
its own peripherals.

btvirt sends one advertising report when advertising starts (bench/realbluez/
README.md): while waiting for relinkd to find the peripheral, the
advertisement program is started again every few seconds, as a periodic
advertiser would be seen. Timings go to LOGDIR/third-party.json. Run by
bench/realbluez/tests/test_real_restart_survival.py (RELINK_REALBLUEZ=full)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Optional

import pytest

from realenv import HEART_RATE, HR_MEASUREMENT, IN_GUEST, LOGDIR, Relinkd, ctl, ctl_ok, wait_for

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_restart_survival.py)")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from relinkbench.realbluez.bluetoothd import Bluetoothd  # noqa: E402

EXAMPLES = "/usr/share/doc/bluez-test-scripts/examples"
ADAPTER = "hci1"
BATTERY = "0000180f-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
ID = "third-party"

# Runs a BlueZ example unmodified, on the adapter named in argv[2].
LOADER = r"""
import runpy, sys
script, adapter = sys.argv[1], sys.argv[2]
sys.argv = [script]
example = runpy.run_path(script, run_name="bluez_example")
example["main"].__globals__["find_adapter"] = lambda bus: "/org/bluez/" + adapter
example["main"]()
"""


class Example:
    """One BlueZ example script on ADAPTER, its output in LOGDIR/<name>.log."""

    def __init__(self, name: str, ready: str):
        self.name = name
        self.ready = ready
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = os.path.join(LOGDIR, f"{name}.log")

    def start(self) -> None:
        self.stop()
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["/usr/bin/python3", "-u", "-c", LOADER, os.path.join(EXAMPLES, self.name),
                                      ADAPTER], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()

        def ready():
            assert self.proc.poll() is None, f"{self.name} exited: {self.output(offset)[-800:]}"
            return self.ready in self.output(offset)
        wait_for(ready, 20, f"{self.name}: {self.ready!r}", interval=0.1)

    def output(self, offset: int = 0) -> str:
        with open(self.log_path, errors="replace") as f:
            f.seek(offset)
            return f.read()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def events_after(after: int) -> list[dict]:
    status, out, _ = ctl("--json", "events", ID, "--after", str(after))
    return json.loads(out).get("events", []) if status == 0 else []


def last_sequence() -> int:
    return max((e.get("sequence", 0) for e in events_after(0)), default=0)


def heart_rates_after(after: int) -> list[list[int]]:
    """Heart-rate measurements (0x2A37 values) notified after event `after`."""
    out = []
    for e in events_after(after):
        if e.get("kind") != "value-notified":
            continue
        p = (e.get("payload") or {}).get("valueNotified") or {}
        if (p.get("characteristic") or {}).get("characteristic", "").lower() == HR_MEASUREMENT:
            out.append(p.get("value") or [])
    return out


class World:
    def __init__(self):
        self.bluetoothd = Bluetoothd(os.path.join(LOGDIR, "bluetoothd.log"), controllers=2)
        self.gatt = Example("example-gatt-server", "GATT application registered")
        self.adv = Example("example-advertisement", "Advertisement registered")
        self.relinkd = Relinkd()
        self.timings: dict[str, float] = {}

    def start_peripheral(self) -> None:
        self.gatt.start()
        self.adv.start()

    def advertise_until(self, pred, timeout: float, what: str) -> None:
        """Waits for pred, starting the advertisement again every 4 s
        (btvirt's one report per start of advertising)."""
        last = [time.monotonic()]

        def check():
            if pred():
                return True
            if time.monotonic() - last[0] > 4:
                self.adv.start()
                last[0] = time.monotonic()
            return False
        wait_for(check, timeout, what, interval=0.3)

    def values_again(self, name: str, seq: int, t0: float, timeout: float = 90) -> None:
        self.advertise_until(lambda: len(heart_rates_after(seq)) >= 2, timeout, f"heart rates after {name}")
        self.timings[name] = round(time.monotonic() - t0, 2)

    def close(self) -> None:
        self.relinkd.stop()
        self.adv.stop()
        self.gatt.stop()
        self.bluetoothd.stop()
        with open(os.path.join(LOGDIR, "third-party.json"), "w") as f:
            json.dump(self.timings, f, indent=1)


@pytest.fixture
def world():
    w = World()
    yield w
    w.close()


def test_bluez_example_heart_rate_survives_restarts(world):
    w = world
    # A machine bluetoothd never ran on (as the bench's own start): devices
    # an earlier test in this VM connected must not come back from storage.
    for entry in os.listdir("/var/lib/bluetooth") if os.path.isdir("/var/lib/bluetooth") else []:
        shutil.rmtree(os.path.join("/var/lib/bluetooth", entry), ignore_errors=True)
    w.bluetoothd.start()
    w.bluetoothd.wait_ready()
    w.gatt.start()
    w.relinkd.start()
    ctl_ok("register", ID)

    # Found by a scan for 0x180D, as an application would.
    t0 = time.monotonic()
    ctl_ok("scan", ID, "180d")
    w.adv.start()
    found = []

    def discovered():
        found[:] = [e for e in events_after(0) if e.get("kind") == "discovered"]
        return bool(found)
    w.advertise_until(discovered, 60, "the example peripheral discovered by a scan for 0x180D")
    ad = found[0]["payload"]["discovered"]["advertisement"]
    assert HEART_RATE in ad.get("serviceUUIDs", []), ad
    address = ad["address"]["address"]
    w.timings["discovered_s"] = round(time.monotonic() - t0, 2)
    ctl_ok("stop-scan", ID)

    ctl_ok("connect", ID, address, "--service", "180d")
    ctl_ok("subscribe", ID, address, "180d", "2a37")
    w.values_again("connect_to_values_s", 0, t0)
    level = json.loads(ctl_ok("--json", "read", ID, address, "180f", "2a19"))["value"]
    assert len(level) == 2, f"battery level {level!r}"
    w.timings["battery_level"] = int(level, 16)

    seq = last_sequence()
    t0 = time.monotonic()
    w.relinkd.signal(signal.SIGKILL)
    w.relinkd.start()
    w.values_again("relinkd_kill_to_values_s", seq, t0)

    for how in (signal.SIGKILL, signal.SIGTERM):
        name = f"bluetoothd_{how.name[3:].lower()}_to_values_s"
        seq = last_sequence()
        t0 = time.monotonic()
        w.bluetoothd.stop(how)
        w.bluetoothd.start()
        w.bluetoothd.wait_ready()
        w.start_peripheral()  # the peripheral's own programs, on the new daemon
        w.values_again(name, seq, t0)
    print("third-party timings:", json.dumps(w.timings))
