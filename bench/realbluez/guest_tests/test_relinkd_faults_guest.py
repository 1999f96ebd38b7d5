"""relinkd through the bench's other faults on real bluetoothd 5.66, inside
the VM: the band's GATT application restarted on a live link, out of range
and back, the peripheral's adapter powered off while it still advertises
(no bench help: what a real device does), a central power cycle and a
bluetoothd SIGTERM restart. After
each, the band's values must arrive again. Every step runs even when an
earlier one failed; each failure is written with relinkd's log lines and
its status to LOGDIR/findings.json, and the test fails listing them.

After the first connection another program holds an unfiltered discovery,
so that relinkd's RSSI filter (finding 6) does not hide what the faults do.
Known to fail until relinkd is fixed (issue #20 findings 1, 2, 4 and the
SIGTERM restart in docs/real-bluez.md), so the host runs it as a separate,
non-strict xfail (bench/realbluez/tests)."""

import json
import os
import re
import subprocess
import time

import pytest

from realenv import (IN_GUEST, LOGDIR, Findings, HeldDiscovery, Relinkd, band_counters,
                     bluez_get, ctl, events, last_sequence, start_bench, stop_bench, wait_for)
from test_smoke_guest import ID, connect_band

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_smoke.py)")


def set_powered(adapter: str, on: bool) -> None:
    subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.bluez", f"/org/bluez/{adapter}",
                    "org.freedesktop.DBus.Properties.Set", "string:org.bluez.Adapter1",
                    "string:Powered", f"variant:boolean:{'true' if on else 'false'}"],
                   check=True, capture_output=True)


def test_band_values_return_after_each_fault():
    bench = start_bench("--band", "band")
    relinkd = Relinkd()
    findings = Findings()
    failed: list[str] = []
    timings: dict[str, float] = {}

    def step(name: str, fault, timeout: float = 45) -> None:
        seq = last_sequence(ID)
        log_mark = len(relinkd.log().splitlines())
        t0 = time.monotonic()
        try:
            fault()
        except Exception as e:    # the fault itself failed: a bench problem, said as such
            failed.append(f"{name} (the fault could not be played: {e})")
            return
        try:
            wait_for(lambda: len(band_counters(events(ID), seq)) >= 2, timeout,
                     f"band values after {name}", interval=0.25)
            timings[name] = round(time.monotonic() - t0, 2)
        except AssertionError:
            failed.append(name)
            status = ctl("--json", "status")[1]
            new_log = "\n".join(relinkd.log().splitlines()[log_mark:])
            findings.record(f"no values after {name} within {timeout} s",
                            f"relinkctl status: {' '.join(status.split())[:700]}", new_log,
                            [r"ignored", r"error=", r"timed out", r"warning", r"connected route",
                             r"disconnected", r"removed", r"InterfacesRemoved"], limit=14,
                            bluetoothd_patterns=())
            # Leave the next step a band in range and linked if it can be.
            bench.try_cmd("in_range", peripheral="band")

    helper = None
    try:
        relinkd.start()
        connect_band(bench, relinkd, findings, timings)
        assert ctl("subscribe", ID, bench.address("band"), "180d", "2a37")[0] == 0
        wait_for(lambda: len(band_counters(events(ID))) >= 2, 20, "first values")

        def app_restart():
            bench.cmd("kill_peripheral", peripheral="band")
            bench.cmd("start_peripheral", peripheral="band")
        step("the band's GATT application restarted on a live link (finding 4)", app_restart)

        # From here on an unfiltered discovery is held by another program, so
        # that relinkd's RSSI filter (finding 6, shown above) does not hide
        # what each fault does: with it, a re-registered advertisement reaches
        # bluetoothd and relinkd's scan sees it. (Not before the application
        # restart: in the one run with it held then, the link dropped 3.5 s
        # after the services came back, and relinkd's reconnection re-armed.)
        helper = HeldDiscovery()

        def away_and_back():
            bench.cmd("out_of_range", peripheral="band")
            wait_for(lambda: bluez_get(bench.path("band"), "org.bluez.Device1", "Connected") != "true",
                     30, "the link down on hci0")
            bench.cmd("in_range", peripheral="band")
        step("out of range and back (advertisement off, adapter off, on, advertisement on)",
             away_and_back, timeout=60)

        def power_off_advertising():
            set_powered("hci1", False)
            set_powered("hci1", True)
        step("the band's adapter powered off while advertising, then on (finding 1)",
             power_off_advertising, timeout=60)

        step("central power cycle", lambda: bench.cmd("power_cycle_central"), timeout=60)
        step("bluetoothd SIGTERM + restart (it powers the adapters off on its way out)",
             lambda: bench.cmd("restart_bluez", signal="TERM", timeout=90), timeout=60)
        # Names (finding 5): bluetoothd 5.66 puts the GAP name and the
        # advertisements received while connected (the held discovery above)
        # in one Name property; each name keeps one source, and the faults'
        # reconnections do not flip them.
        sources: dict[str, set[str]] = {}
        updates = 0
        for line in relinkd.log().splitlines():
            m = re.search(r'name updated.*RELINK_NAME=("[^"]*"|\S+) RELINK_NAME_SOURCE=(\w+)', line)
            if m:
                updates += 1
                sources.setdefault(m.group(1).strip('"'), set()).add(m.group(2))
        flipped = {name: sorted(s) for name, s in sources.items() if len(s) > 1}
        if flipped or updates > 2 * len(sources):
            failed.append(f"names (finding 5): {updates} name-updated lines for {sorted(sources)}; "
                          f"labelled both ways: {flipped}")
    finally:
        if helper is not None:
            helper.stop()
        relinkd.stop()
        stop_bench(bench)
        print("timings:", json.dumps(timings))
        with open(os.path.join(LOGDIR, "faults-timings.json"), "w") as f:
            json.dump({"values_back_after_s": timings, "failed": failed}, f, indent=1)
    assert not failed, f"no values after: {failed} (see findings.json)"
