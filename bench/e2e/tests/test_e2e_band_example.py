"""The heart-rate band example (examples/python-band) on the bench with the
real relinkd: it finds the streaming band by a scan, prints its values and
acknowledges them; SIGKILLed and started again it gets its restored state
first, then the values it missed, once each, then live ones; when relinkd is
SIGKILLed and restarted under it, it registers again, the link comes back
as a `restored` event, and the values go on."""

from e2e_harness import BandClient, wait_until

IDENT = "example-band"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def values(client) -> list[dict]:
    return [l for l in client.events() if l["kind"] == "value-notified"]


def sequences(client) -> list[int]:
    return [e["sequence"] for e in client.events()]


def test_band_example_streams_survives_its_kill_and_relinkd_restart(bench, relinkd, root):
    band = BandClient(bench.bus, IDENT)
    try:
        band.wait_for(lambda l: l["type"] == "scan", 20, "the scan for the heart-rate service")
        band.wait_for(lambda l: l["type"] == "subscribe", 30, "the subscription")
        wait_until(lambda: len(values(band)) >= 3, 30, "three heart-rate values")
        first = values(band)[0]
        assert first["value"].endswith(" bpm"), first
        assert sequences(band) == list(range(1, len(sequences(band)) + 1))
        band.wait_for(lambda l: l["type"] == "acked", 10, "an acknowledgement")
        band.kill9()
        acked = root.central(IDENT, "Acknowledged")
        # Values keep being stored while the program is away.
        wait_until(lambda: sum(1 for _, k, _ in root.events(IDENT, acked) if k == "value-notified") >= 3, 20,
                   "values stored while the program is away")
        missed = [s for s, k, _ in root.events(IDENT, acked)]

        band = BandClient(bench.bus, IDENT)
        restored = band.wait_for(lambda l: l["type"] == "restored", 20, "the restored state")
        assert band.snapshot()[0] is restored, "the restored state comes first"
        [p] = restored["restored"]["peripherals"]
        assert [c.lower() for _, c in p["subscriptions"]] == [HR_MEASUREMENT]
        band.wait_for(lambda l: l["type"] == "restore", 5, "the band already known")
        wait_until(lambda: len(sequences(band)) >= len(missed) + 2, 20, "the missed values, then live ones")
        seqs = sequences(band)
        assert seqs[:len(missed)] == missed, "the missed values, in order, once each"
        assert seqs == sorted(set(seqs)), f"no value twice: {seqs}"
        assert not any(l["type"] in ("scan", "contract", "gap", "error") for l in band.snapshot()), band.dump()

        relinkd.kill9()
        relinkd.start()
        band.wait_for(lambda l: l["type"] == "relinkd" and l["present"], 30, "relinkd back")
        back = band.wait_for(lambda l: l["type"] == "event" and l["kind"] == "restored", 30,
                             "the link restored after relinkd's restart")
        wait_until(lambda: any(e["sequence"] > back["sequence"] for e in values(band)), 20,
                   "values after the restored link")
        assert band.terminate() == 0
    finally:
        band.kill9()
