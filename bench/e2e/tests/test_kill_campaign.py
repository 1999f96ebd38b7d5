"""The kill campaign's short version (bench/campaigns/kill.py, issue 37):
relinkd SIGKILLed 50 times at random moments while three identifiers change
its state (one of them in the peripheral role) and the band streams; after every restart nothing acknowledged is
lost or delivered again, no event number names two events, the store passes
`PRAGMA integrity_check`, and the band's values come back. And a campaign
whose client lies about what it acknowledged is caught: the checks can fail."""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "campaigns"))

import kill  # noqa: E402


def test_fifty_kills_lose_nothing_acknowledged_and_the_band_comes_back():
    seed = int(time.time())
    lines: list[str] = []
    summary = kill.run(50, seed, log=lines.append)
    assert summary["kills"] == 50
    assert summary["violations"] == [], "\n".join(lines)
    assert summary["calls_cut"] >= 1 and summary["calls_acknowledged"] > 50, summary
    assert summary["host_changes"] > 50, summary
    assert summary["recovery_max_s"] is not None and summary["recovery_max_s"] <= summary["bound_s"], summary


def test_the_campaign_catches_an_acknowledgement_relinkd_never_got(monkeypatch):
    """A client that counts an Ack as done without sending it: after the
    next kill the campaign finds relinkd's `acknowledged` below it and the
    events it thought gone still stored."""
    def ack_without_sending(self, identifier):
        self.drain_signals()
        self.model.acked[identifier] = max(self.model.acked[identifier], self.highest[identifier])
    monkeypatch.setattr(kill.Campaign, "ack", ack_without_sending)
    lines: list[str] = []
    summary = kill.run(3, 1, log=lines.append)
    assert any("below the acknowledged Ack" in v for v in summary["violations"]), "\n".join(lines)


def test_the_campaign_catches_a_peripheral_role_change_relinkd_never_got(monkeypatch):
    """A host client that counts an advertisement as started without
    calling: the next restart's `peripheral_manager` shows none, and the
    campaign says so."""
    real = kill.Campaign.host_once

    def claim_an_advertisement(self, choice):
        if choice == 1 and self.model.advertising is not None:
            self.model.advertising = kill.HOST_NAMES[0] + "-never-sent"
            return
        real(self, choice)
    monkeypatch.setattr(kill.Campaign, "host_once", claim_an_advertisement)
    lines: list[str] = []
    summary = kill.run(3, 1, log=lines.append)
    assert any("kc-host: advertising" in v for v in summary["violations"]), "\n".join(lines)
