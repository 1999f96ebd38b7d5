"""End to end, on the bench with the real relinkd and the example client
(examples/python-lock) as separate processes: the client registers, scans,
connects and subscribes; it is SIGKILLed; lock values keep being pushed and
are stored; a new client process with the same identifier gets the restored
state first and then every missed event exactly once, in order. Then the
same with relinkd SIGKILLed and restarted while the client is away."""

import json
import os
import time

from e2e_harness import LOCK_SERVICE, LOCK_STATE, event_value, wait_until

IDENT = "e2e-lock"
# After a crash relinkd numbers events on this far above the last stored one
# (it may have shown a live client events it had not stored yet; their
# numbers are never used again). docs/api/events.md, EventSequencer.window.
CRASH_SKIP = 128


def push(bench, text: str) -> None:
    bench.cmd("push", peripheral="lock", value=text.encode().hex())


def values_of(events) -> list[str]:
    return [e["value"] for e in events if e["kind"] == "value-notified"]


def stored_values(root, after: int) -> list[str]:
    return [event_value(p).decode() for _, k, p in root.events(IDENT, after) if k == "value-notified"]


def start_first_client(bench, clients, root):
    """Client 1: new identifier, scan, connect, subscribe, 3 live values."""
    c1 = clients(bench.bus, IDENT)
    restored = c1.wait_for(lambda l: l["type"] == "restored", 20, "the restored state")
    assert restored["restored"]["new"] is True
    assert restored["restored"]["peripherals"] == []
    c1.wait_for(lambda l: l["type"] == "scan", 10, "the scan")
    c1.wait_for(lambda l: l["type"] == "event" and l["kind"] == "discovered", 20, "the lock discovered")
    c1.wait_for(lambda l: l["type"] == "subscribe", 20, "the subscription")
    c1.wait_for(lambda l: l["type"] == "event" and l["kind"] in ("connected", "restored"), 30,
                "the lock connected")
    # The subscription is armed once the link is up; push until the first value arrives.
    wait_until(lambda: push(bench, "live-0") or "live-0" in values_of(c1.events()), 20,
               "the first live value", 0.5)
    for i in (1, 2, 3):
        push(bench, f"live-{i}")
    c1.wait_for(lambda l: l["type"] == "event" and l.get("value") == "live-3", 10, "live-3")
    last = c1.events()[-1]["sequence"]
    c1.wait_for(lambda l: l["type"] == "acked" and l["sequence"] >= last, 10, "the ack of what it printed")
    events = c1.events()
    seqs = [e["sequence"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1)), f"client 1 saw sequences {seqs}"
    assert values_of(events)[-3:] == ["live-1", "live-2", "live-3"]
    assert root.central(IDENT, "Acknowledged") == last
    return c1, last


def check_replay(c2, acked: int, expected: list, expected_values: list[str]) -> list[dict]:
    """c2's output: restored state first, then exactly `expected` (sequence, kind) in order."""
    lines = c2.snapshot()
    assert lines[0]["type"] == "restored", f"first line is not the restored state: {lines[0]}"
    r = lines[0]["restored"]
    assert r["new"] is False
    assert r["acknowledged"] == acked
    assert r["last_sequence"] == expected[-1][0]
    [lock] = [p for p in r["peripherals"] if p["address"].upper() == "00:00:00:00:00:02"]
    assert [s.lower() for s in lock["subscriptions"][0]] == [LOCK_SERVICE, LOCK_STATE]
    assert not any(l["type"] in ("contract", "gap", "error") for l in lines), c2.dump()
    # Numbers skipped after a crash are told apart from dropped events.
    renumbered = [(l["first"], l["last"]) for l in lines if l["type"] == "renumbered"]
    jumps = [(a + 1, b - 1) for (a, _), (b, _) in zip(expected, expected[1:]) if b != a + 1]
    assert renumbered == jumps, c2.dump()
    got = [(e["sequence"], e["kind"]) for e in c2.events()][:len(expected)]
    assert got == expected, f"replayed {got}, stored {expected}"
    assert values_of(c2.events()[:len(expected)]) == expected_values
    return lines


def test_client_sigkilled_gets_restored_state_then_missed_events_once_in_order(bench, relinkd, root, clients):
    c1, acked = start_first_client(bench, clients, root)
    c1.kill9()

    missed = [f"missed-{i}" for i in range(1, 6)]
    for v in missed:
        push(bench, v)
    wait_until(lambda: stored_values(root, acked) == missed, 10, "the missed values in the outbox")
    stored = root.events(IDENT, acked)
    assert [s for s, _, _ in stored] == list(range(acked + 1, acked + 1 + len(stored)))

    spawned = time.monotonic()
    c2 = clients(bench.bus, IDENT)
    c2.wait_for(lambda l: l["type"] == "acked" and l["sequence"] >= stored[-1][0], 15, "the replay acked")
    print(f"new client process to its missed events processed and acked: {time.monotonic() - spawned:.2f} s")
    check_replay(c2, acked, [(s, k) for s, k, _ in stored], missed)
    # Live events follow the replay, numbered on.
    push(bench, "after")
    after = c2.wait_for(lambda l: l["type"] == "event" and l.get("value") == "after", 10, "a live value")
    assert after["sequence"] == stored[-1][0] + 1
    assert c2.terminate() == 0
    assert c2.snapshot()[-1]["type"] == "exit"
    assert [e["sequence"] for e in c2.events()] == list(range(acked + 1, after["sequence"] + 1))
    assert root.central(IDENT, "Acknowledged") == after["sequence"]
    assert root.events(IDENT, 0) == [], "acknowledged events are deleted"
    assert relinkd.alive


def test_relinkd_sigkilled_and_restarted_while_client_away(bench, relinkd, root, clients):
    c1, acked = start_first_client(bench, clients, root)
    c1.kill9()
    for v in ("before-kill-1", "before-kill-2"):
        push(bench, v)
    wait_until(lambda: stored_values(root, acked) == ["before-kill-1", "before-kill-2"], 10,
               "values stored before relinkd is killed")
    before = root.events(IDENT, acked)

    relinkd.kill9()
    relinkd.start()
    # relinkd resumes the link and the subscription by itself, with no client.
    wait_until(lambda: len(root.events(IDENT, before[-1][0])) > 0 or None, 30,
               "an event from the restarted relinkd (link restored)")
    wait_until(lambda: push(bench, "after-restart-0")
               or "after-restart-0" in stored_values(root, before[-1][0]), 20,
               "a value through the restored subscription", 0.5)
    for v in ("after-restart-1", "after-restart-2"):
        push(bench, v)
    wait_until(lambda: stored_values(root, acked)[-1:] == ["after-restart-2"], 10, "the last value stored")
    stored = root.events(IDENT, acked)
    assert stored[:len(before)] == before, "relinkd's restart changed stored events"
    # Numbered on after the crash skip, never reusing a number.
    restart = before[-1][0] + 1 + CRASH_SKIP
    assert [s for s, _, _ in stored] == [s for s, _, _ in before] + list(range(restart, restart + len(stored) - len(before))), \
        f"sequences after the restart: {[s for s, _, _ in stored]}"
    values = stored_values(root, acked)
    assert values[:2] == ["before-kill-1", "before-kill-2"]
    assert values[-2:] == ["after-restart-1", "after-restart-2"]

    c2 = clients(bench.bus, IDENT)
    c2.wait_for(lambda l: l["type"] == "acked" and l["sequence"] >= stored[-1][0], 15, "the replay acked")
    check_replay(c2, acked, [(s, k) for s, k, _ in stored], values)
    assert c2.terminate() == 0
    if os.environ.get("E2E_DEBUG"):
        print("\n".join(json.dumps(l)[:250] for l in c1.snapshot() + c2.snapshot()))


def test_client_reattaches_when_relinkd_restarts_under_it(bench, relinkd, root, clients):
    """The example client stays up while relinkd is SIGKILLed mid-stream: it
    sees org.relink leave and come back, registers again, and carries on with
    no duplicate and no gap (what it printed but could not ack is replayed and
    skipped by sequence number)."""
    c1, acked = start_first_client(bench, clients, root)
    for i in range(8):
        push(bench, f"mid-{i}")
    relinkd.kill9()
    c1.wait_for(lambda l: l["type"] == "relinkd" and l["present"] is False, 10, "relinkd gone")
    relinkd.start()
    c1.wait_for(lambda l: l["type"] == "relinkd" and l["present"] is True, 10, "relinkd back")
    wait_until(lambda: len([l for l in c1.snapshot() if l["type"] == "restored"]) == 2, 10,
               "the second restored state")
    restored = [l for l in c1.snapshot() if l["type"] == "restored"]
    assert restored[1]["restored"]["acknowledged"] >= acked and restored[1]["restored"]["new"] is False
    wait_until(lambda: push(bench, "again") or "again" in values_of(c1.events()), 30,
               "a value after relinkd's restart", 0.5)
    assert not any(l["type"] in ("contract", "error") for l in c1.snapshot()), c1.dump()
    seqs = [e["sequence"] for e in c1.events()]
    assert all(b > a for a, b in zip(seqs, seqs[1:])), f"not increasing: {seqs}"
    # One jump at most: relinkd skips numbers once after its crash (none dropped).
    assert len([1 for a, b in zip(seqs, seqs[1:]) if b != a + 1]) <= 1, seqs
    assert not any(l["type"] == "gap" for l in c1.snapshot()), c1.dump()
    mid = [v for v in values_of(c1.events()) if v.startswith("mid-")]
    assert mid == sorted(set(mid), key=lambda v: int(v[4:])), f"mid-stream values printed {mid}"
    skipped = [l["sequence"] for l in c1.snapshot() if l["type"] == "skip"]
    assert all(s <= restored[1]["restored"]["last_sequence"] for s in skipped)
    if os.environ.get("E2E_DEBUG"):
        print("\n".join(json.dumps(l)[:160] for l in c1.snapshot()))
    assert c1.terminate() == 0


def test_past_the_bound_the_oldest_are_dropped_visibly_and_the_rest_replayed_once(bench, relinkd, root, clients):
    """More unacknowledged events than EventLimit while the client is away:
    the oldest are dropped, DroppedEvents and the restored state say so, the
    client sees the gap, and the newest EventLimit are replayed once, in order."""
    c1, acked = start_first_client(bench, clients, root)
    c1.kill9()
    limit = root.central(IDENT, "EventLimit")
    assert root.central(IDENT, "DroppedEvents") == 0
    over = 25
    for i in range(limit + over):
        push(bench, f"flood-{i}")
    wait_until(lambda: stored_values(root, acked)[-1:] == [f"flood-{limit + over - 1}"], 60, "the last value stored")
    last = root.central(IDENT, "LastSequence")
    dropped = root.central(IDENT, "DroppedEvents")
    assert last - acked == limit + over, "every pushed value was appended (sequence numbers)"
    assert dropped == over
    stored = root.events(IDENT, 0)
    assert len(stored) == limit and stored[0][0] == acked + over + 1 and stored[-1][0] == last

    c2 = clients(bench.bus, IDENT)
    c2.wait_for(lambda l: l["type"] == "acked" and l["sequence"] >= last, 30, "the replay acked")
    lines = c2.snapshot()
    r = lines[0]["restored"]
    assert (r["dropped_events"], r["acknowledged"], r["last_sequence"]) == (dropped, acked, last)
    assert any(l["type"] == "warning" and l["dropped_events"] == dropped for l in lines)
    gaps = [l for l in lines if l["type"] == "gap"]
    assert [(g["first"], g["last"]) for g in gaps] == [(acked + 1, acked + over)]
    events = c2.events()
    assert [e["sequence"] for e in events] == list(range(acked + over + 1, last + 1))
    assert values_of(events) == [f"flood-{i}" for i in range(over, limit + over)]
    assert c2.terminate() == 0
    assert root.central(IDENT, "Acknowledged") == last


def test_relinkd_stopped_cleanly_numbers_on_without_a_skip(bench, relinkd, root, clients):
    """SIGTERM: relinkd commits everything it showed, leaves the clean-stop
    marker, and the next run numbers on from the last stored event (the
    crash skip is for crashes only)."""
    c1, acked = start_first_client(bench, clients, root)
    c1.kill9()
    push(bench, "before-stop")
    wait_until(lambda: stored_values(root, acked) == ["before-stop"], 10, "the value stored")
    assert relinkd.terminate() == 0
    relinkd.start()
    wait_until(lambda: push(bench, "after-stop") or "after-stop" in stored_values(root, acked), 30,
               "a value after the clean restart", 0.5)
    seqs = [s for s, _, _ in root.events(IDENT, acked)]
    assert seqs == list(range(acked + 1, acked + 1 + len(seqs))), f"a clean stop skips no number: {seqs}"
    assert len(seqs) >= 2
