"""Fuzz: at least 10,000 malformed or random calls (RELINK_FUZZ_CALLS) spread
over every method of Manager1 and Central1 and over Properties Get/GetAll/Set
of Manager1, Central1 and Peripheral1, against the real relinkd on the bench.
relinkd must stay up, answer every call, reject every malformed one with an
error, and leave its state (ListIdentifiers, Status, the identifier's
properties and outbox, the exported objects) exactly as it was.

Seeded: RELINK_FUZZ_SEED=N reproduces a run; the seed is printed and is in
every failure message."""

import asyncio
import collections
import json
import os
import random
import time

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from e2e_fuzzgen import Generator, expected_errors
from e2e_harness import (CENTRAL, LOCK_SERVICE, LOCK_STATE, MANAGER, PERIPHERAL, central_path, wait_until)

TARGET = "fuzz-target"
QUIET_SERVICE = "0000feed-0000-1000-8000-00805f9b34fb"   # nothing on the bench advertises it
IN_FLIGHT = 64
IN_FLIGHT_BYTES = 64 * 1024
VOLATILE = {"rssi", "RSSI", "lastSeen", "last_seen", "LastSeen", "seen", "advertisingNameSeen",
            "gapNameSeen", "AdvertisingNameSeen", "GAPNameSeen", "updatedAt", "updated_at", "time", "now",
            "inbox"}   # Status's inbox: how many inputs wait and the most that ever did, moved by every input


def scrub(value):
    """Status JSON without fields that change on their own (RSSI, timestamps)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def snapshot(root):
    path = central_path(TARGET)
    props = {p: root.central(TARGET, p) for p in
             ("Identifier", "Owner", "NameRule", "Scanning", "ScanServices", "AllowDuplicates",
              "LastSequence", "Acknowledged", "DroppedEvents", "EventLimit")}
    objects = root.call("/org/relink", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")[0]
    status = root.get("/org/relink", MANAGER, "Status")
    return {
        "identifiers": root.identifiers(),
        "central": props,
        "events": root.events(TARGET, 0),
        "objects": sorted(objects),
        "status": scrub(json.loads(status)),
        "path": path,
    }


async def fire(bus_address: str, calls, timeout: float):
    """Sends every call, at most IN_FLIGHT calls and IN_FLIGHT_BYTES at a time
    (dbus-fast 5.2 drops its connection when the socket's send buffer is
    full: it does not handle EAGAIN); returns (call, reply or None) pairs."""
    bus = await MessageBus(bus_address=bus_address, bus_type=BusType.SYSTEM).connect()
    results = [None] * len(calls)
    room = asyncio.Condition()
    state = {"calls": 0, "bytes": 0}

    async def one(i, c):
        msg = Message(destination="org.relink", path=c.path, interface=c.interface, member=c.member,
                      signature=c.signature, body=c.body)
        size = len(msg._marshall(False))
        async with room:
            await room.wait_for(lambda: state["calls"] == 0 or (
                state["calls"] < IN_FLIGHT and state["bytes"] + size <= IN_FLIGHT_BYTES))
            state["calls"] += 1
            state["bytes"] += size
        try:
            results[i] = await asyncio.wait_for(bus.call(msg), timeout)
        except asyncio.TimeoutError:
            results[i] = None
        finally:
            async with room:
                state["calls"] -= 1
                state["bytes"] -= size
                room.notify_all()
    try:
        await asyncio.gather(*(one(i, c) for i, c in enumerate(calls)))
    finally:
        bus.disconnect()
    return list(zip(calls, results))


def test_fuzz_every_method_relinkd_answers_rejects_and_keeps_state(bench, relinkd, root):
    seed = int(os.environ.get("RELINK_FUZZ_SEED", random.randrange(2**32)))
    count = int(os.environ.get("RELINK_FUZZ_CALLS", "10000"))
    print(f"fuzz seed {seed} ({count} calls); rerun with RELINK_FUZZ_SEED={seed}")
    tag = f"[seed {seed}]"

    # The target identifier: a scan nothing answers, the lock connected and subscribed.
    central, restored = root.call("/org/relink", MANAGER, "Register", "sa{sv}", [TARGET, {}])
    assert central == central_path(TARGET)
    root.call(central, CENTRAL, "Scan", "asa{sv}", [[QUIET_SERVICE], {"allow_duplicates": Variant("b", False)}])
    lock_path = root.call(central, CENTRAL, "Connect", "sa{sv}", [bench.address("lock"), {}])[0]
    lock_id = root.get(lock_path, PERIPHERAL, "Id")
    root.call(central, CENTRAL, "Subscribe", "sss", [lock_id, LOCK_SERVICE, LOCK_STATE])
    wait_until(lambda: root.get(lock_path, PERIPHERAL, "Connected"), 30, "the lock connected")
    wait_until(lambda: bench.cmd("push", peripheral="lock", state="locked")
               and any(k == "value-notified" for _, k, _ in root.events(TARGET)), 20, "a stored value", 0.5)
    time.sleep(1.0)   # let connect-time events (names, services) settle
    last = root.central(TARGET, "LastSequence")
    before = snapshot(root)

    gen = Generator(random.Random(seed), TARGET, central, bench.address("lock"), lock_id, [lock_path], last)
    calls = [gen.next() for _ in range(count)]
    started = time.monotonic()
    answered = asyncio.run(fire(bench.bus, calls, timeout=30))
    elapsed = time.monotonic() - started

    unanswered = [c for c, r in answered if r is None]
    accepted = [c for c, r in answered if r is not None and r.message_type != MessageType.ERROR and not c.read_only]
    errors = collections.Counter(r.error_name for c, r in answered if r is not None and r.message_type == MessageType.ERROR)
    no_text = [c for c, r in answered if r is not None and r.message_type == MessageType.ERROR
               and not (r.body and isinstance(r.body[0], str) and r.body[0].strip())]
    known_paths = {"/org/relink", central, lock_path}
    documented = {"org.freedesktop.DBus.Error." + n for n in
                  ("UnknownObject", "UnknownMethod", "UnknownInterface", "UnknownProperty", "PropertyReadOnly",
                   "InvalidArgs")}
    odd_errors = []
    for c, r in answered:
        if r is None or r.message_type != MessageType.ERROR:
            continue
        allowed = expected_errors(c, known_paths)
        if (allowed is None and not (r.error_name.startswith("org.relink.Error.") or r.error_name in documented)) \
                or (allowed is not None and r.error_name not in allowed):
            odd_errors.append((c, r.error_name, r.body[0] if r.body else ""))
    members = collections.Counter(f"{c.interface.rsplit('.', 1)[-1]}.{c.member}" for c in calls)
    print(f"fuzz: {count} calls in {elapsed:.1f} s ({count / elapsed:.0f}/s); per method {dict(sorted(members.items()))}")
    print(f"fuzz: replies {dict(errors.most_common())}")

    assert relinkd.alive, f"{tag} relinkd died:\n{relinkd.log_tail()}"
    if os.environ.get("E2E_DEBUG"):
        with open(relinkd.log_path, errors="replace") as f:
            levels = collections.Counter(l.split(" ", 2)[1] for l in f if l[:4].isdigit() and " " in l)
        print(f"fuzz: relinkd log lines by level {dict(levels)}")
    assert not unanswered, f"{tag} {len(unanswered)} calls got no reply, e.g. {unanswered[0].describe()}"
    assert not accepted, f"{tag} {len(accepted)} malformed calls succeeded, e.g.:\n" + \
        "\n".join(c.describe() for c in accepted[:5])
    assert not odd_errors, f"{tag} {len(odd_errors)} calls got an error name docs/api does not give for them, e.g.:\n" + \
        "\n".join(f"{c.describe()}\n    -> {e}: {m}" for c, e, m in odd_errors[:8])
    assert not no_text, f"{tag} errors without a message, e.g. {no_text[0].describe()}"
    after = snapshot(root)
    for key in before:
        assert after[key] == before[key], f"{tag} {key} changed:\nbefore {before[key]}\nafter  {after[key]}"
    # Still fully working: a value pushed now is stored with the next sequence.
    bench.cmd("push", peripheral="lock", state="unlocked")
    wait_until(lambda: root.central(TARGET, "LastSequence") == last + 1, 10, "the next value stored")
