"""The "Done when" scenarios with bluetoothctl (BlueZ's own client) as a
third-party client on the bench's private bus."""

import re
import time

from benchproc import Bluetoothctl

LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_COMMAND = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
DEVICE_NAME = "00002a00-0000-1000-8000-00805f9b34fb"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"


def discover(ctl: Bluetoothctl, bench) -> None:
    """Scan until `devices` lists the lock and the band (a device found by an
    earlier test of the module is not [NEW] again)."""
    ctl.run("scan on", r"Discovery started|Discovering: yes")
    deadline = time.monotonic() + 10
    while True:
        start = ctl.mark()
        ctl.send("devices")
        time.sleep(0.3)
        seen = ctl.output[start:]
        if (f"Device {bench.address('lock')}" in seen
                and f"Device {bench.address('band')}" in seen):
            break
        assert time.monotonic() < deadline, ctl.output[-3000:]
    ctl.run("scan off", r"Discovering: no|Discovery stopped")


def test_a_discovers_lock_and_band(bench, btctl):
    start = btctl.mark()
    btctl.send("scan on")
    # Found with their advertised names (the GAP names come only with a connection).
    btctl.expect(rf"\[NEW\] Device {bench.address('lock')} RLK-7F3A", 10, start)
    btctl.expect(rf"\[NEW\] Device {bench.address('band')} HRM-2C41", 10, start)
    btctl.run("scan off", r"Discovering: no|Discovery stopped")


def test_a_uuid_filter_finds_only_the_band(fresh_bench):
    bench = fresh_bench()
    ctl = Bluetoothctl(bench)
    try:
        ctl.run("menu scan", r"Menu scan")
        ctl.run(f"uuids {HEART_RATE}", r"#")
        ctl.run("back", r"Menu main")
        start = ctl.mark()
        ctl.send("scan on")
        ctl.expect(rf"\[NEW\] Device {bench.address('band')} HRM-2C41", 10, start)
        time.sleep(1.0)  # five more scan reports: the lock must not appear
        ctl.run("scan off", r"Discovery stopped|Discovering: no")
        assert f"Device {bench.address('lock')}" not in ctl.output[start:]
        assert "SetDiscoveryFilter success" in ctl.output
    finally:
        ctl.close()


def test_b_connect_read_gap_name_lock_state_and_notifications(bench, btctl):
    discover(btctl, bench)
    lock = bench.address("lock")
    start = btctl.mark()
    btctl.send(f"connect {lock}")
    btctl.expect(r"Connection successful", 10, start)
    # BlueZ's GAP plugin: after connecting, Name becomes the 0x2A00 name.
    btctl.expect(rf"\[CHG\] Device {lock} Name: Front Door", 10, start)
    btctl.run("menu gatt", r"Menu gatt")
    btctl.run(f"select-attribute {DEVICE_NAME}", r"char")
    btctl.run("read", r"46 72 6f 6e 74 20 44 6f 6f 72\s+Front Door")
    btctl.run(f"select-attribute {LOCK_STATE}", r"char")
    btctl.run("read", r"6c 6f 63 6b 65 64\s+locked")
    btctl.run("notify on", r"Notify started")
    start = btctl.mark()
    bench.cmd("push", peripheral="lock", state="unlocked")
    btctl.expect(r"75 6e 6c 6f 63 6b 65 64\s+unlocked", 5, start)
    # A write of "lock" to the command characteristic locks it again.
    # (bluetoothctl prints value changes of the selected attribute only.)
    # The prompt names the selected attribute's path (its number depends on
    # what else the lock publishes): wait for the command's, not the state's.
    # The old prompt can still be printed after the new command was sent
    # (readline redraws it when the previous command's output ends), so wait
    # for a prompt naming another characteristic; a select that does not
    # move times out here.
    state_prompt = btctl.run(f"select-attribute {LOCK_STATE}", r"/char[0-9a-f]{4}\]#").group(0)
    state_char = state_prompt[len("/char"):len("/char") + 4]
    btctl.run(f"select-attribute {LOCK_COMMAND}", rf"/char(?!{state_char})[0-9a-f]{{4}}\]#")
    btctl.run("write \"0x6c 0x6f 0x63 0x6b\"", r"Attempting to write")
    deadline = time.monotonic() + 5
    while bench.cmd("get", peripheral="lock")["locked"] is not True:
        assert time.monotonic() < deadline, "the write did not lock the lock"
        time.sleep(0.1)
    btctl.run(f"select-attribute {LOCK_STATE}", re.escape(state_prompt))
    btctl.run("read", r"6c 6f 63 6b 65 64\s+locked")
    btctl.run("back", r"Menu main")
    btctl.run(f"disconnect {lock}", rf"Device {lock} Connected: no|Successful disconnected")


def test_b_band_notifications_stream(bench, btctl):
    discover(btctl, bench)
    band = bench.address("band")
    btctl.run(f"connect {band}", r"Connection successful")
    btctl.run("menu gatt", r"Menu gatt")
    btctl.run(f"select-attribute {HR_MEASUREMENT}", r"char")
    start = btctl.mark()
    btctl.send("notify on")
    btctl.expect(r"Notify started", 5, start)
    # The band streams: at least two values must arrive (bounded wait).
    btctl.expect(r"\[CHG\] Attribute[^\n]*\n(.|\n)*\[CHG\] Attribute", 10, start)
    btctl.run("notify off", r"Notify stopped")
    btctl.run("back", r"Menu main")
    btctl.run(f"disconnect {band}", rf"Connected: no|Successful disconnected")


def test_c_out_of_range_drops_link_connect_fails_then_reconnects(bench, btctl):
    discover(btctl, bench)
    lock = bench.address("lock")
    btctl.run(f"connect {lock}", r"Connection successful")
    start = btctl.mark()
    bench.cmd("out_of_range", peripheral="lock")
    btctl.expect(rf"\[CHG\] Device {lock} Connected: no", 5, start)
    t0 = time.monotonic()
    btctl.run(f"connect {lock}",
              r"Failed to connect: org\.bluez\.Error\.Failed le-connection-abort-by-local", 10)
    assert 0.5 < time.monotonic() - t0 < 5
    bench.cmd("in_range", peripheral="lock")
    btctl.run(f"connect {lock}", r"Connection successful", 10)
    btctl.run(f"disconnect {lock}", rf"Connected: no|Successful disconnected")
