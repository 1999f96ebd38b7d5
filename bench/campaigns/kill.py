"""Kill campaign (issue 37, campaign 1): relinkd SIGKILLed at random moments
while clients change its state and values stream, checked after every
restart against a model the campaign keeps.

  .venv/bin/python bench/campaigns/kill.py [--kills 1000] [--seed N] [--relinkd PATH] [--json FILE]

On the simulated bench (BlueZoo: a lock and a heart-rate band), with the
real relinkd on a private bus and a real SQLite store:

* identifier `kc-band` holds an intent on the band and a subscription to
  its heart rate; values stream (about 10 a second) and the campaign
  acknowledges them as it goes;
* identifier `kc-churn` is changed without pause: a scan started with
  other services or stopped, an intent on the lock added or cancelled, a
  subscription on it added or removed, its events acknowledged; now and
  then it is forgotten (`Unregister`) and registered anew;
* identifier `kc-host` plays the peripheral role on the central's adapter:
  one of two services published or removed, an advertisement started
  (one of two names) or stopped, and the cacheable characteristic of the
  first service updated (its value is kept).

A timer SIGKILLs relinkd at a random moment of each round (0 to 1.5 s in).
A call whose reply came is acknowledged: the model takes it. A call cut by
the kill (no reply) is uncertain: the campaign adopts what relinkd restored
for that part of the state. Then, relinkd dead, and after it is started
again and both identifiers registered again, the campaign checks:

1. `PRAGMA integrity_check` is `ok` on a copy of the store (file and WAL);
2. every acknowledged change is in `Register`'s restored state (scan and
   its services, the intent, the subscriptions; the band's intent and
   subscription never go; the host's published services, its
   advertisement's name and the last value of its cacheable
   characteristic, in `peripheral_manager`);
3. no acknowledged event is delivered again: `acknowledged` is at least
   the last acknowledged number and no stored event is at or below it;
4. no stored, unacknowledged event is lost: every event read from the
   store (`Events`) before the kill and not acknowledged is stored after
   it, or counted as dropped (`dropped_range`);
5. event numbers are never reused: no number names two different events
   (kind and payload), whether seen live (`Event` signals) or stored;
6. the band is back: `connected`, and a value with a number above every
   one seen before the kill, within `--bound` seconds (the time is kept).

Prints one line per violation and a summary; exits 1 on any violation.
With `--json` the summary (counts, recovery times, the seed, the commit)
is also written to a file. The short version runs in `.ci/run` (pytest,
`bench/e2e/tests/test_kill_campaign.py`); long runs go to
docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import TimeoutError as CallTimeout
from dataclasses import dataclass, field
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402,F401  (puts the bench's modules on the path)

import e2e_harness  # noqa: E402
from common import commit, finish, integrity, store_copy  # noqa: E402
from benchproc import BenchProcess  # noqa: E402
from e2e_harness import (CENTRAL, LOCK_SERVICE, LOCK_STATE, MANAGER, PERIPHERAL_MANAGER, Caller, DBusCallError,  # noqa: E402
                         Relinkd)
from relinkbench.apipaths import central_path  # noqa: E402
from relinkbench.waiting import WaitTimeout, wait_until  # noqa: E402

LOCK = "00:00:00:00:00:02"
BAND = "00:00:00:00:00:03"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
HR_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BAND_ID = "kc-band"
CHURN_ID = "kc-churn"
#: The errors of a call that relinkd's death cut (or that found it gone).
GONE = {"org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.Disconnected"}
SCAN_CHOICES = ([HEART_RATE], [LOCK_SERVICE], [])
HOST_ID = "kc-host"
#: The host's two services: the first has a cacheable characteristic whose
#: value relinkd keeps (UpdateValue); the second a plain notify one.
HOST_SERVICES = ("8e7f5a00-4b2c-4d1e-9a3f-72656c696e6b", "8e7f5b00-4b2c-4d1e-9a3f-72656c696e6b")
HOST_CACHED = "8e7f5a01-4b2c-4d1e-9a3f-72656c696e6b"
HOST_PLAIN = "8e7f5b01-4b2c-4d1e-9a3f-72656c696e6b"
HOST_NAMES = ("KC1", "KC2")
IDENTIFIERS = (BAND_ID, CHURN_ID, HOST_ID)


def host_service(uuid: str) -> str:
    """One of the host's services, as `AddService` takes it."""
    characteristic = {"uuid": HOST_CACHED, "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": True} \
        if uuid == HOST_SERVICES[0] else \
        {"uuid": HOST_PLAIN, "properties": ["notify"], "permissions": ["readable"]}
    return json.dumps({"uuid": uuid, "primary": True, "characteristics": [characteristic]})


class Uncertain(Exception):
    """A call relinkd's death cut: whether it was applied is not known."""


@dataclass
class Model:
    """What relinkd acknowledged, per part of the state; None: uncertain."""
    scanning: Optional[bool] = False
    scan_services: Optional[list[str]] = field(default_factory=list)
    lock_intent: Optional[bool] = False
    lock_subscribed: Optional[bool] = False
    acked: dict[str, int] = field(default_factory=lambda: {i: 0 for i in IDENTIFIERS})
    #: An Ack the kill cut, by identifier (0: none): the events up to it may be gone or not.
    ack_cut: dict[str, int] = field(default_factory=lambda: {i: 0 for i in IDENTIFIERS})
    #: An Unregister of the churn identifier the kill may have cut: "sent"
    #: (no reply yet), "answered" (not yet registered anew), or None.
    unregister_cut: Optional[str] = None
    #: The host's services: published or not, per service (None: uncertain).
    published: dict[str, Optional[bool]] = field(default_factory=lambda: {u: False for u in HOST_SERVICES})
    #: The host's advertisement's name, "" when not advertising (None: uncertain).
    advertising: Optional[str] = ""
    #: The last value kept for the cacheable characteristic ([] none; None: uncertain).
    cached: Optional[list[int]] = field(default_factory=list)


@dataclass
class Figures:
    kills: int = 0
    calls_acknowledged: int = 0
    calls_cut: int = 0
    forgotten: int = 0
    host_changes: int = 0
    events_seen: int = 0
    values_seen: int = 0
    recoveries_s: list[float] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)


class Campaign:
    def __init__(self, bus: str, relinkd: Relinkd, rng: random.Random, bound: float, log=print):
        self.bus = bus
        self.relinkd = relinkd
        self.rng = rng
        self.bound = bound
        self.log = log
        self.model = Model()
        self.figures = Figures()
        self.callers = {i: Caller(bus) for i in IDENTIFIERS}
        self.read = {i: 0 for i in IDENTIFIERS}       # signals read so far, per caller
        self.seen: dict[tuple[str, int], tuple[str, str]] = {}   # (identifier, seq) -> (kind, payload)
        self.stored_unacked: dict[str, set[int]] = {i: set() for i in IDENTIFIERS}
        self.highest: dict[str, int] = {i: 0 for i in IDENTIFIERS}
        self.highest_value = 0  # the band's newest value-notified number

    # -- calls -------------------------------------------------------------------

    def call(self, identifier: str, member: str, signature: str = "", body: Optional[list] = None,
             path: Optional[str] = None, interface: str = CENTRAL) -> list:
        try:
            reply = self.callers[identifier].call(path or central_path(identifier), interface, member, signature,
                                                  body, timeout=10)
        except DBusCallError as e:
            if e.name in GONE:
                self.figures.calls_cut += 1
                raise Uncertain(member) from e
            raise
        except CallTimeout as e:
            self.figures.calls_cut += 1
            raise Uncertain(member) from e
        self.figures.calls_acknowledged += 1
        return reply

    def set_up(self) -> None:
        """Both identifiers registered, the band connected and subscribed,
        its first value seen."""
        for identifier in IDENTIFIERS:
            self.register(identifier)
        self.call(BAND_ID, "Connect", "sa{sv}", [BAND, {}])
        self.call(BAND_ID, "Subscribe", "sss", [BAND, HEART_RATE, HR_MEASUREMENT])
        self.check_band_back(0, time.monotonic())

    def register(self, identifier: str) -> dict:
        _, restored = self.call(identifier, "Register", "sa{sv}", [identifier, {}], path="/org/relink", interface=MANAGER)
        return restored

    # -- events ------------------------------------------------------------------

    def note_event(self, identifier: str, seq: int, kind: str, payload: str, where: str) -> None:
        key = (identifier, seq)
        before = self.seen.get(key)
        if before is None:
            self.seen[key] = (kind, payload)
            self.figures.events_seen += 1
            if kind == "value-notified":
                self.figures.values_seen += 1
        elif before != (kind, payload):
            self.violation(f"{identifier} #{seq} names two events: {before[0]} {before[1][:120]} and, {where}, "
                           f"{kind} {payload[:120]}")
        self.highest[identifier] = max(self.highest[identifier], seq)
        if identifier == BAND_ID and kind == "value-notified":
            self.highest_value = max(self.highest_value, seq)

    def drain_signals(self) -> None:
        for identifier, caller in self.callers.items():
            signals = caller.signals
            while self.read[identifier] < len(signals):
                msg = signals[self.read[identifier]]
                self.read[identifier] += 1
                if msg.member == "Event" and msg.path == central_path(identifier):
                    seq, kind, payload = msg.body
                    self.note_event(identifier, int(seq), kind, payload, "live")

    def read_store(self, identifier: str) -> list[tuple[int, str, str]]:
        rows = self.call(identifier, "Events", "tu", [0, 10000])[0]
        events = [(int(s), k, p) for s, k, p in rows]
        for seq, kind, payload in events:
            self.note_event(identifier, seq, kind, payload, "stored")
        return events

    def ack(self, identifier: str) -> None:
        self.drain_signals()
        through = self.highest[identifier]
        if through <= self.model.acked[identifier]:
            return
        self.model.ack_cut[identifier] = through  # until the reply: relinkd may have applied it or not
        self.call(identifier, "Ack", "t", [through])
        self.model.ack_cut[identifier] = 0
        self.model.acked[identifier] = through
        self.stored_unacked[identifier] = {s for s in self.stored_unacked[identifier] if s > through}

    # -- the churn ---------------------------------------------------------------

    def forget_churn(self) -> None:
        """The churn identifier is gone (Unregister answered, or a cut one
        was applied): a new one of that name starts from nothing, its
        numbers from 1."""
        self.drain_signals()  # the old identifier's signals came before the reply
        self.model.scanning, self.model.scan_services = False, []
        self.model.lock_intent, self.model.lock_subscribed = False, False
        self.model.acked[CHURN_ID] = self.model.ack_cut[CHURN_ID] = 0
        self.stored_unacked[CHURN_ID] = set()
        self.highest[CHURN_ID] = 0
        self.seen = {k: v for k, v in self.seen.items() if k[0] != CHURN_ID}

    def churn_once(self, unregister: bool = True) -> None:
        m = self.model
        choice = self.rng.randrange(400)
        if choice == 399 and unregister:
            m.scanning = m.scan_services = m.lock_intent = m.lock_subscribed = None
            m.unregister_cut = "sent"
            self.call(CHURN_ID, "Unregister", "s", [CHURN_ID], path="/org/relink", interface=MANAGER)
            self.figures.forgotten += 1
            self.forget_churn()
            m.unregister_cut = "answered"  # until registered anew, a restart finds it gone
            self.register(CHURN_ID)
            m.unregister_cut = None
            return
        choice %= 12
        if choice >= 8:
            return self.host_once(choice - 8)
        if choice == 0:
            services = self.rng.choice(SCAN_CHOICES)
            m.scanning, m.scan_services = None, None
            self.call(CHURN_ID, "Scan", "asa{sv}", [services, {}])
            m.scanning, m.scan_services = True, sorted(services)
        elif choice == 1:
            m.scanning, m.scan_services = None, None
            self.call(CHURN_ID, "StopScan")
            m.scanning, m.scan_services = False, []
        elif choice == 2 and m.lock_intent is False:
            m.lock_intent = None
            self.call(CHURN_ID, "Connect", "sa{sv}", [LOCK, {}])
            m.lock_intent = True
        elif choice == 3 and m.lock_intent is True:
            m.lock_intent, m.lock_subscribed = None, None
            self.call(CHURN_ID, "Cancel", "s", [LOCK])
            m.lock_intent, m.lock_subscribed = False, False
        elif choice == 4 and m.lock_intent is True and m.lock_subscribed is False:
            m.lock_subscribed = None
            self.call(CHURN_ID, "Subscribe", "sss", [LOCK, LOCK_SERVICE, LOCK_STATE])
            m.lock_subscribed = True
        elif choice == 5 and m.lock_subscribed is True:
            m.lock_subscribed = None
            self.call(CHURN_ID, "Unsubscribe", "sss", [LOCK, LOCK_SERVICE, LOCK_STATE])
            m.lock_subscribed = False
        elif choice == 6:
            self.ack(self.rng.choice(IDENTIFIERS))
        else:
            identifier = self.rng.choice(IDENTIFIERS)
            for seq, _, _ in self.read_store(identifier):
                if seq > self.model.acked[identifier]:
                    self.stored_unacked[identifier].add(seq)

    def host_once(self, choice: int) -> None:
        """One change of the host's peripheral role; the model takes it
        once relinkd answered."""
        m = self.model
        uuid = self.rng.choice(HOST_SERVICES)
        if choice == 0 and m.published[uuid] is False:
            m.published[uuid] = None
            self.host_call("AddService", "s", [host_service(uuid)])
            m.published[uuid] = True
        elif choice == 0 and m.published[uuid] is True:
            m.published[uuid] = None
            if uuid == HOST_SERVICES[0]:
                m.cached = None
            self.host_call("RemoveService", "s", [uuid])
            m.published[uuid] = False
            if uuid == HOST_SERVICES[0]:
                m.cached = []  # its cached values go with it
        elif choice == 1:
            name = self.rng.choice(HOST_NAMES)
            m.advertising = None
            self.host_call("StartAdvertising", "s", [json.dumps({"localName": name, "serviceUUIDs": [HOST_SERVICES[0]]})])
            m.advertising = name
        elif choice == 2:
            m.advertising = None
            self.host_call("StopAdvertising")
            m.advertising = ""
        elif m.published[HOST_SERVICES[0]] is True and m.cached is not None:
            value = [self.rng.randrange(256)]
            before, m.cached = m.cached, None
            try:
                self.host_call("UpdateValue", "ssay", [HOST_SERVICES[0], HOST_CACHED, bytes(value)])
            except DBusCallError as e:
                if e.name != "org.relink.Error.UpdateQueueFull":
                    raise
                m.cached = before  # refused: nothing kept
                return
            m.cached = value

    def host_call(self, member: str, signature: str = "", body: Optional[list] = None) -> None:
        """A PeripheralManager1 call of the host, counted once answered."""
        self.call(HOST_ID, member, signature, body, interface=PERIPHERAL_MANAGER)
        self.figures.host_changes += 1

    def check_host(self, restored: dict) -> None:
        """The host's restored peripheral role against the model; an
        uncertain part takes what relinkd restored."""
        m = self.model
        role = json.loads(restored.get("peripheral_manager") or "{}")
        services = {s["uuid"].lower() for s in role.get("services", [])}
        for uuid in HOST_SERVICES:
            if m.published[uuid] is None:
                m.published[uuid] = uuid in services
            elif (uuid in services) != m.published[uuid]:
                self.violation(f"{HOST_ID}: service {uuid} published {uuid in services}, acknowledged {m.published[uuid]}")
        name = (role.get("advertisement") or {}).get("localName", "")
        if m.advertising is None:
            m.advertising = name
        elif name != m.advertising:
            self.violation(f"{HOST_ID}: advertising {name!r}, acknowledged {m.advertising!r}")
        kept = next((c["value"] for c in role.get("cachedValues", []) if c["characteristic"].lower() == HOST_CACHED), [])
        if m.cached is None:
            m.cached = kept
        elif kept != m.cached:
            self.violation(f"{HOST_ID}: cached value {kept}, acknowledged {m.cached}")

    # -- a round -----------------------------------------------------------------

    def violation(self, text: str) -> None:
        self.figures.violations.append(text)
        self.log(f"VIOLATION (kill {self.figures.kills}): {text}")

    def round(self, window: float) -> None:
        killer = threading.Timer(self.rng.uniform(0.0, window), self.relinkd.kill9)
        killer.start()
        try:
            while self.relinkd.alive:
                try:
                    self.churn_once()
                except Uncertain:
                    break
        finally:
            killer.join()
        self.relinkd.kill9()
        self.figures.kills += 1
        self.drain_signals()
        self.check_store_file()
        killed_at = time.monotonic()
        before = dict(self.highest)
        self.relinkd.start()
        self.check_restored(before)
        self.check_band_back(before[BAND_ID], killed_at)

    def check_store_file(self) -> None:
        with store_copy(self.relinkd.state_dir) as db:
            result = integrity(db)
        if result != ["ok"]:
            self.violation(f"integrity_check: {result[:5]}")

    def check_restored(self, before: dict[str, int]) -> None:
        m = self.model
        for identifier in IDENTIFIERS:
            restored = self.register(identifier)
            if identifier == CHURN_ID and m.unregister_cut:
                if restored["new"] and m.unregister_cut == "sent":  # the cut Unregister was applied
                    self.forget_churn()
                    self.figures.forgotten += 1
                m.unregister_cut = None
            elif restored["new"]:
                self.violation(f"{identifier} was not in the store after the restart")
            acknowledged = int(restored["acknowledged"])
            cut, m.ack_cut[identifier] = m.ack_cut[identifier], 0
            if cut and acknowledged >= cut:  # the cut Ack was applied
                m.acked[identifier] = cut
            if acknowledged < m.acked[identifier]:
                self.violation(f"{identifier}: acknowledged {acknowledged} after the restart, below the "
                               f"acknowledged Ack through {m.acked[identifier]}")
            stored = self.read_store(identifier)
            numbers = {s for s, _, _ in stored}
            early = sorted(s for s in numbers if s <= m.acked[identifier])
            if early:
                self.violation(f"{identifier}: events acknowledged (through {m.acked[identifier]}) stored again: {early[:10]}")
            first, last = (int(x) for x in restored["dropped_range"])
            lost = sorted(s for s in self.stored_unacked[identifier]
                          if s not in numbers and not (first <= s <= last) and s > m.acked[identifier])
            if lost:
                self.violation(f"{identifier}: stored unacknowledged events lost across the kill: {lost[:10]} "
                               f"(acknowledged {acknowledged}, Ack through {m.acked[identifier]}, cut Ack {cut}, "
                               f"dropped {first}-{last}, stored {min(numbers, default=0)}-{max(numbers, default=0)})")
            self.stored_unacked[identifier] = {s for s in numbers if s > m.acked[identifier]}
            if identifier == HOST_ID:
                self.check_host(restored)
                continue
            peripherals = {p["address"].upper(): p for p in restored["peripherals"]}
            if identifier == BAND_ID:
                band = peripherals.get(BAND)
                subscribed = band is not None and any(c.lower() == HR_MEASUREMENT for _, c in band["subscriptions"])
                if band is None or band["state"] == "none" or not subscribed:
                    self.violation(f"{BAND_ID}: the band's intent or subscription is gone: {band}")
                continue
            scan_services = sorted(s.lower() for s in restored["scan_services"])
            if m.scanning is None:
                m.scanning, m.scan_services = bool(restored["scanning"]), scan_services
            elif bool(restored["scanning"]) != m.scanning or (m.scanning and scan_services != m.scan_services):
                self.violation(f"{CHURN_ID}: scan {restored['scanning']} {scan_services}, acknowledged "
                               f"{m.scanning} {m.scan_services}")
            lock = peripherals.get(LOCK)
            intent = lock is not None and lock["state"] != "none"
            subscribed = lock is not None and any(c.lower() == LOCK_STATE for _, c in lock["subscriptions"])
            if m.lock_intent is None:
                m.lock_intent = intent
            elif intent != m.lock_intent:
                self.violation(f"{CHURN_ID}: lock intent {intent}, acknowledged {m.lock_intent} ({lock})")
            if m.lock_subscribed is None:
                m.lock_subscribed = subscribed
            elif subscribed != m.lock_subscribed:
                self.violation(f"{CHURN_ID}: lock subscription {subscribed}, acknowledged {m.lock_subscribed} ({lock})")
            m.lock_subscribed = m.lock_subscribed and m.lock_intent

    def check_band_back(self, highest_before: int, killed_at: float) -> None:
        def back() -> bool:
            self.drain_signals()
            return self.highest_value > highest_before
        try:
            wait_until(back, self.bound, "a band value after the restart", 0.02)
        except WaitTimeout:
            self.violation(f"no value from the band within {self.bound} s of the restart")
            return
        self.figures.recoveries_s.append(time.monotonic() - killed_at)

    def close(self) -> None:
        for c in self.callers.values():
            c.close()


def run(kills: int, seed: int, relinkd_path: Optional[str] = None, bound: float = 20.0, window: float = 1.5,
        log=print) -> dict[str, Any]:
    """Runs the campaign; returns the summary (see the module's text)."""
    if relinkd_path:
        e2e_harness.RELINKD = relinkd_path  # what Relinkd.start runs
    rng = random.Random(seed)
    ran_on = commit()  # at the start: the checkout may move while a long run goes
    started = time.monotonic()
    bench = BenchProcess("--lock", "lock", "--band", "band")
    workdir = tempfile.mkdtemp(prefix="relink-kill-campaign-")
    relinkd = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log"))
    campaign: Optional[Campaign] = None
    try:
        relinkd.start()
        campaign = Campaign(bench.bus, relinkd, rng, bound, log)
        campaign.set_up()
        for _ in range(kills):
            campaign.round(window)
            if campaign.figures.kills % 50 == 0:
                log(f"kill campaign: {campaign.figures.kills} kills, {len(campaign.figures.violations)} violations")
    finally:
        figures = campaign.figures if campaign else Figures()
        if campaign:
            campaign.close()
        relinkd.kill9()
        log_tail = relinkd.log_tail(60) if figures.violations else ""
        bench.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    recoveries = figures.recoveries_s[1:]  # the first is the set-up's
    summary = {
        "kills": figures.kills, "violations": figures.violations, "calls_acknowledged": figures.calls_acknowledged,
        "calls_cut": figures.calls_cut, "identifiers_forgotten": figures.forgotten, "host_changes": figures.host_changes, "events_seen": figures.events_seen, "values_seen": figures.values_seen,
        "recovery_median_s": round(statistics.median(recoveries), 3) if recoveries else None,
        "recovery_max_s": round(max(recoveries), 3) if recoveries else None,
        "bound_s": bound, "seed": seed, "commit": ran_on, "seconds": round(time.monotonic() - started, 1),
        "relinkd": e2e_harness.RELINKD,
    }
    if log_tail:
        log("relinkd's log, last lines:\n" + log_tail)
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kills", type=int, default=1000)
    p.add_argument("--seed", type=int, default=None, help="the random seed (default: from the clock, printed)")
    p.add_argument("--relinkd", help="the relinkd binary (default: the debug build, or $RELINKD)")
    p.add_argument("--bound", type=float, default=20.0, help="seconds for the band's values to come back after a restart")
    p.add_argument("--json", help="write the summary here")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    return finish(run(args.kills, seed, args.relinkd, args.bound), args.json)


if __name__ == "__main__":
    sys.exit(main())
