"""A program the bench's bus starts by D-Bus activation
(test_e2e_relaunch_events.py), for an identifier with no example program of
its own (the peripheral role's hub): it owns --bus-name, registers
--identifier, and appends to --output one JSON line for the restored state,
one for the launch reason (when relinkd gives one) and one per event it
receives, acknowledging each; it runs until it is killed."""

import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from remote_central import PeripheralProgram  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bus", required=True)
    p.add_argument("--identifier", required=True)
    p.add_argument("--bus-name", required=True)
    p.add_argument("--output", required=True)
    args = p.parse_args()

    def out(line_type: str, **fields) -> None:
        with open(args.output, "a") as f:
            f.write(json.dumps({"type": line_type, **fields}) + "\n")

    program = PeripheralProgram(args.bus, args.identifier, register=False)
    # DBUS_NAME_FLAG_DO_NOT_QUEUE: the bus answers relinkd's start once the name is owned.
    program.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName", "su", [args.bus_name, 4],
                 destination="org.freedesktop.DBus")
    restored = program.register()
    out("restored", restored={k: v for k, v in restored.items() if k != "launch_reason"})
    if "launch_reason" in restored:
        out("launch-reason", launch_reason=restored["launch_reason"])
    seen = 0
    while True:
        for sequence, kind, payload in program.events():
            if sequence > seen:
                out("event", sequence=sequence, kind=kind, payload=payload)
                program.call(program.path, "org.relink.Central1", "Ack", "t", [sequence])
                seen = sequence
        # The program's own poll interval over the stored events (Events is
        # the durable outbox, so nothing is missed between polls); the tests
        # wait on its output with bounds, never on this.
        time.sleep(0.05)


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        # The bus started it: its stderr goes nowhere a test sees.
        with open(sys.argv[sys.argv.index("--output") + 1], "a") as f:
            f.write(json.dumps({"type": "crash", "traceback": traceback.format_exc()}) + "\n")
        raise
