"""The fault soak's short version (bench/campaigns/soak.py, issue 37): two
minutes of mixed faults (relinkd SIGKILL, bluetoothd SIGKILL and SIGTERM,
adapter power cycles, the band away and back, the band's client gone and
back, the store's disk full for a few seconds) while the kill campaign's
clients change state and the band streams: after every fault the band's
values come back, nothing acknowledged is lost or stored again, a call
refused on the full disk changes nothing, relinkd's descriptors and
threads do not grow."""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "campaigns"))

import soak  # noqa: E402


def test_two_minutes_of_mixed_faults_lose_nothing_and_the_band_comes_back_after_each():
    seed = int(time.time())
    lines: list[str] = []
    summary = soak.run(2.0, seed, log=lines.append, full_seconds=8.0)
    assert summary["violations"] == [], "\n".join(lines)
    played = [name for name in soak.FAULTS if not any(n.startswith(name) for n in summary["not_played"])]
    assert all(summary["faults"][name] >= 1 for name in played), summary["faults"]
    assert len(summary["samples"]) >= 3, summary["samples"]
    print({k: summary[k] for k in ("faults", "recovery_median_s", "recovery_max_s", "slopes_per_minute", "not_played",
                                    "disk_full_s", "calls_refused_store_full", "seed")})


def test_the_soak_catches_a_band_that_never_comes_back(monkeypatch):
    """The real band-away fault, with the band never started again: the
    soak's check must say the band's values did not come back."""
    real = soak.Soak.fault

    def band_never_started_again(self, name):
        cmd = self.bench.cmd
        self.bench.cmd = lambda c, **kw: {} if c == "start_peripheral" else cmd(c, **kw)
        try:
            real(self, "band-away")
        finally:
            self.bench.cmd = cmd
    monkeypatch.setattr(soak.Soak, "fault", band_never_started_again)
    summary = soak.run(0.05, 1, bound=3.0, log=lambda _: None)
    assert any("band-away: no value from the band" in v for v in summary["violations"]), summary["violations"]
