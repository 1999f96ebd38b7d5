"""relink-lock: an example relink client for a lock.

Registers a restore identifier with relinkd, prints the restored state, finds
the lock (already known, --address, already connected, or a scan for its
service with a time limit), connects it, subscribes to its lock state, then
prints every event in order with its sequence and acknowledges what it
printed. When a link comes back as `restored` after a relinkd restart, it
reads the lock state: a change while relinkd was down is not an event. Run it again after a crash (or SIGKILL): it gets its state
back first, then every event it missed, once each, in order. SIGTERM or
Ctrl-C: acknowledge, leave the bus, exit 0 (relinkd keeps the link).

  relink-lock [--bus-address ADDRESS] [--identifier ID] [--address AA:BB:..] [--scan-timeout S] [--json]

Exit status: 0 on SIGTERM/SIGINT, 1 on a relinkd error, 3 when the bus or
relinkd cannot be reached, 4 when relinkd broke the event contract (an event
before the Register reply, a sequence repeated within one attachment), 5
when no lock was found within the scan's time limit.
"""

from relink_example.program import Target, main

LOCK_SERVICE = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"

LOCK = Target(noun="lock", label="lock state", service=LOCK_SERVICE, characteristic=LOCK_STATE,
              value_text=lambda value: value.decode("utf-8", "replace"), readable=True)

if __name__ == "__main__":
    main(LOCK, "relink-lock", __doc__ or "", "example-lock")
