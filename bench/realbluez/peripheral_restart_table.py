#!/usr/bin/env python3
"""Tables of the peripheral role's restart matrix on real bluetoothd from
one or more runs' peripheral-restarts.json (guest_tests/
test_peripheral_restarts_guest.py): pass counts per case, and per restart
kind the time from the restart's start to bluetoothd having the
advertisement again, to the central finding it, to the services on the
central, and to the central's first notification (median, min-max over
states and runs).

    bench/realbluez/peripheral_restart_table.py RUN1/peripheral-restarts.json RUN2/...
"""

import json
import statistics
import sys

KINDS = ["relinkd_kill", "relinkd_term", "reboot", "bluetoothd_kill", "bluetoothd_term", "power_cycle"]
STATES = ["advertising", "connected", "subscribed"]
FIGURES = [("restart_s", "restart itself"), ("advertising_s", "advertising registered"),
           ("found_s", "found by the central"), ("services_s", "services on the central"),
           ("notification_s", "first notification")]


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(paths: list[str]) -> None:
    runs = [json.load(open(p))["cases"] for p in paths]
    cases = [c for run in runs for c in run]
    print(f"| state \\ kind | {' | '.join(KINDS)} |")
    print(f"|---|{'---|' * len(KINDS)}")
    for state in STATES:
        cells = []
        for kind in KINDS:
            mine = [c for c in cases if c["state"] == state and c["kind"] == kind]
            passed = sum(c["result"] == "pass" for c in mine)
            cells.append(f"{passed}/{len(mine)}" if mine else "-")
        print(f"| {state} | {' | '.join(cells)} |")
    print()
    print(f"| kind | {' | '.join(name for _, name in FIGURES)} |")
    print(f"|---|{'---|' * len(FIGURES)}")
    for kind in KINDS:
        mine = [c for c in cases if c["kind"] == kind and c["result"] == "pass"]
        print(f"| {kind} | {' | '.join(spread([c[k] for c in mine if k in c]) for k, _ in FIGURES)} |")
    for c in cases:
        if c["result"] != "pass":
            print(f"\nfailed: {c['case']}: {c.get('error', '')[:400]}")


if __name__ == "__main__":
    main(sys.argv[1:])
