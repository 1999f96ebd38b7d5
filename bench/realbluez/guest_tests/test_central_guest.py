"""Issue 22 on real bluetoothd 5.66, inside the VM: what the central role
gained (the GATT database, descriptors, write sizes, the write stream on
AcquireWrite's socket, long writes) against the bench's lock on hci1, as on
the mock bench, where BlueZoo has no AcquireWrite. Run by
bench/realbluez/tests/test_real_central.py through run-vm; skipped elsewhere.

Figures (not asserted): writes without response per second through
relinkd's stream beside a program writing the same values straight into
bluetoothd's AcquireWrite socket (the floor), in LOGDIR/central.json."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from realenv import IN_GUEST, LOGDIR, RELINKCTL, Relinkd, ctl, ctl_ok, events, lock_world, wait_for

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_central.py)")

ID = "door"
LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_FIRMWARE = "8e7f1a03-4b2c-4d1e-9a3f-72656c696e6b"
USER_DESCRIPTION = "00002901-0000-1000-8000-00805f9b34fb"
# bluetoothd's own services on the peripheral's side, not the program's:
# GAP (hidden by 5.66's client), GATT, and the deviceinfo plugin's 0x180A.
BLUETOOTHD_OWN = {"00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
                  "0000180a-0000-1000-8000-00805f9b34fb"}
# The CCCD bluetoothd adds to a notifying characteristic itself.
CCCD = "00002902-0000-1000-8000-00805f9b34fb"
COUNT = 300

# The floor: the same values written straight into AcquireWrite's socket.
FLOOR = r"""
import asyncio, os, socket, sys, time
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
async def main(uuid, count):
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    r = await bus.call(Message(destination="org.bluez", path="/", interface="org.freedesktop.DBus.ObjectManager",
                               member="GetManagedObjects"))
    path = next(p for p, i in r.body[0].items()
                if p.startswith("/org/bluez/hci0/") and i.get("org.bluez.GattCharacteristic1", {}).get("UUID") is not None
                and i["org.bluez.GattCharacteristic1"]["UUID"].value == uuid)
    r = await bus.call(Message(destination="org.bluez", path=path, interface="org.bluez.GattCharacteristic1",
                               member="AcquireWrite", signature="a{sv}", body=[{}]))
    if r.message_type == MessageType.ERROR:
        print("ERROR", r.error_name, r.body, flush=True); return
    fd = r.unix_fds[r.body[0]]
    sock = socket.socket(fileno=os.dup(fd))
    sock.setblocking(True)  # bluetoothd hands it over non-blocking: EAGAIN would drop values
    print("MTU", r.body[1], flush=True)
    sys.stdin.readline()
    t0 = time.monotonic()
    sent = 0
    try:
        for n in range(count):
            sock.send(b"lock" if n % 2 else b"unlock")
            sent += 1
        print("SENT", sent, round(time.monotonic() - t0, 3), flush=True)
    except OSError as e:
        print("SENT", sent, round(time.monotonic() - t0, 3), "then", repr(e), flush=True)
    sys.stdin.readline()
    sock.close()
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


FIGURES: dict = {}


@pytest.fixture
def world():
    yield from lock_world("central.json", FIGURES)


def connected_lock(bench, relinkd: Relinkd) -> str:
    """relinkd started, the identifier registered and connected to the lock: its address."""
    address = bench.address("lock")
    relinkd.start()
    ctl_ok("register", ID)
    ctl_ok("connect", ID, address, "--service", LOCK_SERVICE)
    wait_for(lambda: any(e.get("kind") == "connected" for e in events(ID)), 30, "connected to the lock")
    return address


def lock_writes(bench) -> int:
    return int(bench.cmd("get", peripheral="lock")["writes"])


def writes_settled(bench, target: int, timeout: float) -> tuple[int, float]:
    """(the lock's count, seconds) once it reached `target`, or once it has
    not grown for 3 s (writes lost on the way), within `timeout`. The 3 s
    quiet window is the one real-time wait here: it is how a loss is told
    from a slow arrival, which no condition can (the floor may lose values
    and its losses are a figure); 0.05 s is the poll interval."""
    t0 = time.monotonic()
    last, last_change = lock_writes(bench), time.monotonic()
    reached = t0
    while time.monotonic() - t0 < timeout:
        n = lock_writes(bench)
        if n != last:
            last, last_change, reached = n, time.monotonic(), time.monotonic()
        if n >= target or time.monotonic() - last_change > 3:
            return n, reached - t0
        time.sleep(0.05)
    return last, reached - t0


def find_key(value, key: str):
    """The first value of `key` anywhere in a JSON document."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = find_key(item, key)
            if found is not None:
                return found
    return None


def comparable(services: list[dict]) -> list[dict]:
    """Services as the lock's program published them: UUIDs lower case,
    bluetoothd's own services and CCCDs left out, descriptors by UUID (5.66's
    client shows no descriptor flags), only the fields the bench knows."""
    out = []
    for s in services:
        if s["uuid"].lower() in BLUETOOTHD_OWN:
            continue
        out.append({"uuid": s["uuid"].lower(), "primary": s["primary"],
                    "includes": sorted(u.lower() for u in s.get("includes", [])),
                    "characteristics": sorted(
                        ({"uuid": c["uuid"].lower(), "flags": sorted(c.get("flags", [])),
                          "descriptors": sorted(d["uuid"].lower() for d in c.get("descriptors", [])
                                                 if d["uuid"].lower() != CCCD)}
                         for c in s.get("characteristics", [])), key=lambda c: c["uuid"])})
    return sorted(out, key=lambda s: s["uuid"])


def test_database_descriptors_write_sizes_and_stream_on_real_bluetoothd(world):
    bench, relinkd, figures = world
    address = connected_lock(bench, relinkd)
    connected = next(e for e in events(ID) if e.get("kind") == "connected")

    # The database: what the lock's program published, as bluetoothd shows it.
    database = json.loads(ctl_ok("--json", "gatt", ID, address))
    published = bench.cmd("get", peripheral="lock")["gatt"]
    figures["database_services"] = [s["uuid"] for s in database["services"]]
    assert comparable(database["services"]) == comparable(published), (
        f"relinkd's database {json.dumps(database)[:1500]} differs from what the lock published "
        f"{json.dumps(published)[:1500]}")

    # A descriptor read through bluetoothd.
    value = ctl_ok("read-descriptor", ID, address, LOCK_SERVICE, LOCK_STATE, USER_DESCRIPTION).strip()
    assert bytes.fromhex(value) == b"Lock state"

    # Write sizes from the negotiated MTU.
    # `connected` carries them when bluetoothd had shown the MTU by then; on
    # 5.66 the characteristics (which carry `MTU`) may come after
    # `ServicesResolved`, and then Peripheral1 has them a moment later.
    mtu = find_key(connected, "mtu")
    figures["mtu_in_connected"] = mtu is not None
    if mtu is not None:
        # An attribute value is at most 512 bytes, whatever the MTU
        # (bluetoothd negotiates 517 here).
        assert find_key(connected, "maximumWriteWithoutResponse") == min(mtu - 3, 512)
        assert find_key(connected, "maximumWriteWithResponse") == 512

    def peripheral():
        entries = json.loads(ctl_ok("--json", "peripherals"))
        entries = entries.get("peripherals", entries) if isinstance(entries, dict) else entries
        return next((p for p in entries if p.get("address") == address and p.get("mtu")), None)
    entry = wait_for(peripheral, 10, "Peripheral1.MTU of the connected lock")
    assert mtu is None or entry["mtu"] == mtu
    mtu = entry["mtu"]
    figures["mtu"] = mtu
    assert entry["maximumWriteWithoutResponse"] == min(mtu - 3, 512)
    assert entry["maximumWriteWithResponse"] == 512

    # The largest write with response: relinkd says 512 (an attribute's
    # largest value); measure what this bluetoothd takes, by bisection, and
    # what relinkd answers past it.
    def write_ok(size: int) -> tuple[bool, str]:
        status, _, err = ctl("write", ID, address, LOCK_SERVICE, LOCK_COMMAND, (b"lock" + b" " * (size - 4)).hex())
        return status == 0, err.strip()
    accepted, refusal = write_ok(512)
    figures["write_512_refusal"] = refusal
    low, high = 4, 512
    if not accepted:
        while high - low > 1:
            middle = (low + high) // 2
            ok, err = write_ok(middle)
            low, high = (middle, high) if ok else (low, middle)
            if not ok:
                figures["write_refusal"] = err
    figures["largest_write_with_response"] = low if not accepted else 512
    assert figures["largest_write_with_response"] >= min(mtu - 3, 512) - 16, figures

    # The floor: AcquireWrite straight from a program.
    floor = subprocess.Popen([sys.executable, "-c", FLOOR, LOCK_COMMAND, str(COUNT)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        line = floor.stdout.readline()
        assert line.startswith("MTU"), f"the floor's AcquireWrite failed: {line!r}"
        before = lock_writes(bench)
        t0 = time.monotonic()
        floor.stdin.write("\n")
        floor.stdin.flush()
        counted, floor_s = writes_settled(bench, before + COUNT, 120)
        figures["floor_writes_per_s"] = round((counted - before) / max(floor_s, 1e-3), 1)
        figures["floor_lost"] = before + COUNT - counted
        figures["floor_said"] = floor.stdout.readline().strip()
        try:
            floor.stdin.write("\n")
            floor.stdin.flush()
        except BrokenPipeError:
            pass
        floor.wait(10)
    finally:
        if floor.poll() is None:
            floor.kill()

    # relinkd's stream: on AcquireWrite's socket here, not the fallback.
    before = lock_writes(bench)
    lines = "".join(("lock" if n % 2 else "unlock") + "\n" for n in range(COUNT))
    t0 = time.monotonic()
    out = subprocess.run([RELINKCTL, "write", ID, address, LOCK_SERVICE, LOCK_COMMAND, "--without-response",
                          "--stream", "--text"], input=lines, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, f"relinkctl write --stream: {out.returncode} {out.stderr}"
    counted, _ = writes_settled(bench, before + COUNT, 120)
    stream_s = time.monotonic() - t0
    figures["stream_writes_per_s"] = round((counted - before) / stream_s, 1)
    figures["stream_output"] = (out.stdout + out.stderr).strip()[-300:]
    figures["stream_lost"] = before + COUNT - counted
    log = relinkd.log()
    opened = [l for l in log.splitlines() if "write stream opened" in l]
    figures["stream_transport"] = opened[-1][opened[-1].find("("):opened[-1].find(")") + 1] if opened else None
    assert opened and "(acquired)" in opened[-1], f"the stream did not use AcquireWrite: {opened}"
    assert figures["stream_lost"] == 0, f"writes lost through relinkd's stream: {figures}"


def firmware_records(path: str) -> list[bytes]:
    """The values the lock's firmware characteristic received, in order."""
    with open(path, "rb") as f:
        data = f.read()
    out, i = [], 0
    while i + 4 <= len(data):
        n = int.from_bytes(data[i:i + 4], "little")
        out.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return out


def reassemble(records: list[bytes], file: bytes) -> tuple[int, int]:
    """(bytes of `file` received in order, chunks received again): a record
    that is not the next part of the file must be one sent before (a
    chunk sent again after a restart); anything else fails."""
    offset, again = 0, 0
    sent: set[tuple[int, int]] = set()
    for r in records:
        if file[offset:offset + len(r)] == r:
            sent.add((offset, len(r)))
            offset += len(r)
            continue
        assert any(file[k:k + n] == r for k, n in sent if n == len(r)), (
            f"a value at the lock that is no chunk of the file (after {offset} bytes)")
        again += 1
    return offset, again


@pytest.mark.parametrize("with_response", [True, False], ids=["with-response", "without-response"])
def test_a_transfer_resumes_across_a_relinkd_sigkill_on_real_bluetoothd(world, with_response):
    bench, relinkd, figures = world
    address = connected_lock(bench, relinkd)
    file = os.urandom(64 * 1024)
    path = os.path.join(LOGDIR, "firmware.bin")
    with open(path, "wb") as f:
        f.write(file)
    log = "/tmp/firmware-log.bin"
    bench.cmd("firmware_log", peripheral="lock", path=log)
    args = ["transfer", ID, address, LOCK_SERVICE, LOCK_FIRMWARE, path, "--resume", "--detach"]
    if not with_response:
        # Chunks under the 510 bytes the lock's bluetoothd takes (difference
        # 23): a longer Write Command is dropped there without a word, and
        # relinkd cannot tell (difference 26).
        args += ["--no-response", "--chunk-size", "448"]
    t0 = time.monotonic()
    ctl_ok(*args)
    # SIGKILL relinkd once a quarter of the file is at the lock.
    wait_for(lambda: bench.cmd("get", peripheral="lock")["firmware_bytes"] >= len(file) // 4, 120,
             "a quarter of the file at the lock", interval=0.05)
    relinkd.signal(signal.SIGKILL)
    relinkd.start()
    ctl_ok("register", ID)

    def ended():
        kinds = [e.get("kind") for e in events(ID)]
        return "transfer-completed" in kinds or "transfer-failed" in kinds
    wait_for(ended, 300, "the transfer's end after the restart", interval=0.5)
    kinds = [e for e in events(ID) if e.get("kind") in ("transfer-completed", "transfer-failed")]
    key = "transfer_with_response" if with_response else "transfer_without_response"
    figures[key] = {"seconds": round(time.monotonic() - t0, 2), "end": kinds[-1]}
    assert kinds[-1].get("kind") == "transfer-completed", f"the transfer failed: {kinds[-1]}"
    received, again = reassemble(firmware_records(log), file)
    figures[key].update({"bytes_in_order": received, "chunks_again": again})
    assert received == len(file), f"{received} of {len(file)} bytes reached the lock in order"
