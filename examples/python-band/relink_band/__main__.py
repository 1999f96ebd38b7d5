"""relink-band: an example relink client for a heart-rate band.

Registers a restore identifier with relinkd, prints the restored state, finds
the band (already known, --address, already connected, or a scan for the
Heart Rate service 0x180D with a time limit), connects it, subscribes to its
Heart Rate Measurement (0x2A37), then prints every value in order with its
sequence and acknowledges what it printed. Run it again after a crash (or
SIGKILL): it gets its state back first, then every value it missed, once
each, in order; after a relinkd restart the link comes back as a `restored`
event and the values go on. SIGTERM or Ctrl-C: acknowledge, leave the bus,
exit 0 (relinkd keeps the link and stores the values until the program is
back, up to the identifier's event limit).

  relink-band [--bus-address ADDRESS] [--identifier ID] [--address AA:BB:..] [--scan-timeout S] [--json]

Exit status: 0 on SIGTERM/SIGINT, 1 on a relinkd error, 3 when the bus or
relinkd cannot be reached, 4 when relinkd broke the event contract, 5 when
no band was found within the scan's time limit.
"""

from relink_example.program import Target, main

HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def heart_rate(value: bytes) -> str:
    """A Heart Rate Measurement, as the Bluetooth specification lays it out:
    a flags byte, then the rate as uint8, or as uint16 little-endian when
    flag bit 0 is set."""
    if len(value) < 2:
        return f"malformed measurement {value.hex()}"
    wide = value[0] & 0x01
    if wide and len(value) < 3:
        return f"malformed measurement {value.hex()}"
    bpm = int.from_bytes(value[1:3], "little") if wide else value[1]
    return f"{bpm} bpm"


BAND = Target(noun="band", label="heart rate", service=HEART_RATE, characteristic=HEART_RATE_MEASUREMENT,
              value_text=heart_rate, readable=False)

if __name__ == "__main__":
    main(BAND, "relink-band", __doc__ or "", "example-band")
