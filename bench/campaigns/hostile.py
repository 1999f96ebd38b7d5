"""Hostile calls campaign (issue 37, campaign 2): random and malformed calls
to every method of every relink interface, from several connections at
once, pipelined without waiting, against the real relinkd on the simulated
bench; relinkd must answer each, reject each malformed one with a typed
error and a message, keep its state exactly, and keep its memory and its
open descriptors flat.

  .venv/bin/python bench/campaigns/hostile.py [--calls 100000] [--connections 4] [--seed N] [--relinkd PATH] [--json FILE]

Set-up: identifier `hc-target` scans for a service nothing advertises,
holds the lock connected and subscribed, with a value stored; a write
stream is open on the lock's command characteristic (the set-up's
connection holds it: the campaign's connections may not write to it).

The calls (seeded, reproducible with --seed):

* the typed defects of `bench/e2e/tests/e2e_fuzzgen.py` (Manager1, Central1's
  first methods, Properties): a bad identifier, address, UUID or option, an
  unknown peripheral, a value too long, a read-only property set, a wrong
  signature; each must get the error docs/api gives for it;
* every other method that relinkd's own `Introspect` lists on its objects
  (the identifier's Central1 and PeripheralManager1, Peripheral1, the write
  stream's WriteStream1, ObjectManager, Introspectable, Peer), with a wrong
  signature or with the right one and hostile values: empty, huge (up to
  1 MB) and control-character strings, JSON nested 100,000 deep, unknown
  identifiers and peripherals, malformed UUIDs and addresses, arrays of
  10,000 elements, variants nested to the bus's limit, object paths to
  nothing, integers at their bounds; a method with no argument only with a
  wrong signature (its right call is not malformed);
* a file descriptor (a pipe, /dev/null, a file) where the method takes one
  and, on 5% of the others, where none belongs.

A tenth of the calls (`--other-user-share`) come from another Unix user
(uid 65534, through setpriv; only when the campaign runs as root): every
one of them must fail (only a call that reads may succeed), with an error
docs/api names. They are sent by `hostile_fire.py` from a world-readable
copy, at the same time as root's four connections.

relinkd's Control1 test interface is left out (root's test hook: any
identifier it is given is valid, so a random one is not malformed).
Strings the bus refuses (invalid UTF-8, a NUL) never reach relinkd: the
bus daemon drops the sender's connection (dbus-daemon validates every
message), so they are not sent.

Checked: relinkd alive and every call answered (within 60 s); no
malformed call succeeds (a call with the right signature and hostile
values to a method the typed defects do not cover may succeed only when
it changes nothing: the state comparison is its judge, and the summary
counts such calls per method); every error is one docs/api names
(org.relink.Error.* or the bus's standard names) with a message; the
state before and after equal (identifiers, the identifier's properties
and events, the exported objects, `Status`, the peripheral role's
`State()`, `Transfers()`); relinkd's resident memory, open descriptors and
threads sampled every tenth of the calls (the summary gives them and the
memory's slope); descriptors back to their count after set-up; memory at the end within
`--memory-slack` MiB of the first tenth's and a quarter of it of the
half-way mark's (flat). Then a value
pushed by the lock is stored with the next number: relinkd still works.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from typing import Any, Optional

from dbus_fast import Message, Variant

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402,F401  (puts the bench's modules on the path)

import e2e_harness  # noqa: E402
from benchproc import BenchProcess  # noqa: E402
from common import commit, finish, process_figures, slope  # noqa: E402
from e2e_fuzzgen import METHODS, PROPS, Call, Generator, expected_errors  # noqa: E402
from e2e_harness import (CENTRAL, LOCK_COMMAND, LOCK_SERVICE, LOCK_STATE, MANAGER, PERIPHERAL, PERIPHERAL_MANAGER, Caller,  # noqa: E402
                         Relinkd, die_with_parent)
from hostile_fire import fire  # noqa: E402
from relinkbench.apipaths import central_path  # noqa: E402
from relinkbench.waiting import wait_until  # noqa: E402

TARGET = "hc-target"
QUIET_SERVICE = "0000feed-0000-1000-8000-00805f9b34fb"   # nothing on the bench advertises it
WRITE_STREAM = "org.relink.WriteStream1"
#: The largest call sent (dbus-fast cannot send more than the socket buffer takes at once).
MAX_CALL_BYTES = 100_000
#: Status fields that move by themselves (RSSI, times, the inbox's depth).
VOLATILE = {"rssi", "RSSI", "lastSeen", "last_seen", "LastSeen", "seen", "advertisingNameSeen",
            "gapNameSeen", "AdvertisingNameSeen", "GAPNameSeen", "updatedAt", "updated_at", "time", "now", "inbox"}
#: Methods that only read: they may succeed.
READ_ONLY = {"Transfers", "State", "GetManagedObjects", "Introspect", "Ping", "GetMachineId", "Get", "GetAll",
             "Events", "ListIdentifiers", "GattDatabase", "RetrievePeripherals",
             # Makes a connected device offering a named service known, as a discovery does.
             "RetrieveConnectedPeripherals"}
#: The bus's standard errors docs/api allows besides org.relink.Error.*.
STANDARD = {"org.freedesktop.DBus.Error." + n for n in
            ("UnknownObject", "UnknownMethod", "UnknownInterface", "UnknownProperty", "PropertyReadOnly", "InvalidArgs")}


def scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def introspect(root: Caller, path: str) -> dict[tuple[str, str], str]:
    """(interface, member) -> in-signature of every method `Introspect` lists on `path`."""
    xml = root.call(path, "org.freedesktop.DBus.Introspectable", "Introspect")[0]
    methods = {}
    for iface in ET.fromstring(xml).findall("interface"):
        for method in iface.findall("method"):
            sig = "".join(a.get("type", "") for a in method.findall("arg") if a.get("direction", "in") == "in")
            methods[(iface.get("name"), method.get("name"))] = sig
    return methods


class EveryMethod(Generator):
    """The typed defects of e2e_fuzzgen, and hostile calls to every other
    method relinkd's objects list (`methods`: path -> (interface, member) -> signature)."""

    def __init__(self, rng: random.Random, methods: dict[str, dict[tuple[str, str], str]], **kwargs):
        super().__init__(rng, **kwargs)
        self.methods = [(path, iface, member, sig) for path, table in sorted(methods.items())
                        for (iface, member), sig in sorted(table.items())
                        if (iface, member) not in METHODS and iface != "org.relink.Control1"]

    def next(self) -> Call:
        call = super().next() if self.r.random() < 0.45 else self.other()
        if self.r.random() < 0.05 and "h" not in call.signature:
            call.fds = 1   # a descriptor where none belongs
        return call

    def other(self) -> Call:
        path, iface, member, right = self.r.choice(self.methods)
        if self.r.random() < 0.15:
            path = self.r.choice(["/org/relink/stream/999999", "/org/relink/peripheral/0", "/org/relink/nowhere",
                                  central_path(self.unknown_identifier())])
        if not right or self.r.random() < 0.3:
            sig = self.rand_signature(right)
            return Call(path, iface, member, sig, self.rand_values(sig), why="wrong signature")
        while True:
            call = Call(path, iface, member, right, self.hostile_values(right), read_only=member in READ_ONLY,
                        why="hostile values")
            if size(call) <= MAX_CALL_BYTES:
                break
        call.fds = right.count("h")
        return call

    # -- hostile values ------------------------------------------------------------------

    def hostile_string(self) -> str:
        r = self.r
        roll = r.random()
        if roll < 0.15:
            return self.bad_identifier()
        if roll < 0.25:
            return self.unknown_identifier()
        if roll < 0.4:
            return self.bad_uuid()
        if roll < 0.5:
            return self.bad_address()
        if roll < 0.6:
            return self.unknown_peripheral()
        if roll < 0.7:
            depth = r.choice([100, 1000, 30_000])
            return r.choice(["[", '{"a":']) * depth + r.choice(["]", "}"]) * depth
        if roll < 0.8:
            return r.choice(["", "[]", "null", '{"uuid": 5}', '{"uuid": "180d", "characteristics": "x"}',
                             '{"local_name": ' + '"x"' * 3 + '}', '{"locaName": "x"}', '{"uuid":"180d","characteristics":[{}]}'])
        if roll < 0.9:
            return "y" * r.choice([4096, 70_000])
        return self.rand_string(200)

    def hostile_values(self, sig: str) -> list:
        from dbus_fast.signature import SignatureTree
        return [self._hostile(t, 0) for t in SignatureTree(sig).types]

    def _hostile(self, node, depth: int) -> Any:
        tok, r = node.token, self.r
        if tok == "s":
            return self.hostile_string() if depth == 0 else self.hostile_string()[:200]
        if tok == "o":
            return r.choice(["/", "/org/relink/nowhere", "/org/relink/stream/0", "/" + "/".join(["p"] * r.randint(1, 200))])
        if tok == "h":
            return 0   # the call's first descriptor
        if tok == "v":
            return self.deep_variant(r.randint(1, 30))
        if tok == "a":
            child = node.children[0]
            n = r.choice([0, 1, 3, 10_000]) if child.token in "ybnqiuxtd" else r.choice([0, 1, 3, 50])
            if child.token == "{":
                k, v = child.children
                return {self._hostile(k, depth + 1) if k.token != "s" else self.option_key(): self._hostile(v, depth + 1)
                        for _ in range(n)}
            if child.token == "y":
                return bytes(r.randint(0, 255) for _ in range(r.choice([0, 1, 513, 5000, 70_000])))
            return [self._hostile(child, depth + 1) for _ in range(n)]
        if tok == "(":
            return [self._hostile(c, depth + 1) for c in node.children]
        return self.rand_value(node.signature)

    def option_key(self) -> str:
        return self.r.choice(["", "x" * 300, "with_response", "timeout", "offset", "name", "é", self.rand_string(20)])

    def deep_variant(self, depth: int) -> Variant:
        value = Variant("s", self.hostile_string()[:100])
        for _ in range(depth):
            value = Variant("v", value)
        return value


def size(call: Call) -> int:
    """The call's bytes on the wire."""
    return len(Message(destination="org.relink", path=call.path, interface=call.interface, member=call.member,
                       signature=call.signature, body=call.body)._marshall(False))


class Target:
    """The identifier the calls aim at, its objects and what state to compare."""

    def __init__(self, bench: BenchProcess, root: Caller) -> None:
        self.bench, self.root = bench, root
        self.path = central_path(TARGET)
        self.lock_path = ""
        self.lock_id = ""
        self.stream_path: Optional[str] = None

    def set_up(self) -> None:
        root, bench = self.root, self.bench
        central, _ = root.call("/org/relink", MANAGER, "Register", "sa{sv}", [TARGET, {}])
        assert central == self.path, central
        root.call(central, CENTRAL, "Scan", "asa{sv}", [[QUIET_SERVICE], {"allow_duplicates": Variant("b", False)}])
        self.lock_path = root.call(central, CENTRAL, "Connect", "sa{sv}", [bench.address("lock"), {}])[0]
        self.lock_id = root.get(self.lock_path, PERIPHERAL, "Id")
        root.call(central, CENTRAL, "Subscribe", "sss", [self.lock_id, LOCK_SERVICE, LOCK_STATE])
        wait_until(lambda: root.get(self.lock_path, PERIPHERAL, "Connected"), 30, "the lock connected")
        wait_until(lambda: bench.cmd("push", peripheral="lock", state="locked")
                   and any(k == "value-notified" for _, k, _ in root.events(TARGET)), 20, "a stored value", 0.5)
        try:
            self.stream_path = root.call(central, CENTRAL, "OpenWriteStream", "sss", [self.lock_id, LOCK_SERVICE, LOCK_COMMAND])[0]
        except e2e_harness.DBusCallError as e:
            print(f"hostile: no write stream on the lock ({e.name}): WriteStream1 is called on a path with none")

    def settled(self) -> None:
        """Waits until connect-time events (names, services) stop coming."""
        last = [-1, time.monotonic()]

        def quiet() -> bool:
            now = self.root.central(TARGET, "LastSequence")
            if now != last[0]:
                last[0], last[1] = now, time.monotonic()
            return time.monotonic() - last[1] >= 1.0
        wait_until(quiet, 30, "the identifier's events settled", 0.2)

    def paths(self) -> list[str]:
        return ["/org/relink", self.path, self.lock_path] + ([self.stream_path] if self.stream_path else [])

    def snapshot(self) -> dict[str, Any]:
        root = self.root
        props = {p: root.central(TARGET, p) for p in
                 ("Identifier", "Owner", "NameRule", "Scanning", "ScanServices", "AllowDuplicates",
                  "LastSequence", "Acknowledged", "DroppedEvents", "EventLimit")}
        objects = root.call("/org/relink", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")[0]
        return {
            "identifiers": root.identifiers(),
            "central": props,
            "events": root.events(TARGET, 0),
            "objects": sorted(objects),
            "status": scrub(json.loads(root.get("/org/relink", MANAGER, "Status"))),
            "peripheral_role": json.loads(root.call(self.path, PERIPHERAL_MANAGER, "State")[0]),
            "transfers": root.call(self.path, CENTRAL, "Transfers")[0],
        }


#: The other Unix user some calls come from (nobody).
OTHER_UID = 65534


class OtherUser:
    """hostile_fire.py run under OTHER_UID (setpriv) from a world-readable
    copy with dbus-fast, sending its share of the calls while root's go."""

    def __init__(self, bus: str, workdir: str, calls: list[tuple], seed: int, connections: int, timeout: float) -> None:
        import dbus_fast
        runtime = os.path.join(workdir, "other-user")
        shutil.copytree(os.path.dirname(dbus_fast.__file__), os.path.join(runtime, "dbus_fast"))
        shutil.copy(os.path.join(HERE, "hostile_fire.py"), runtime)
        for top, dirs, files in os.walk(workdir):
            for name in dirs:
                os.chmod(os.path.join(top, name), 0o755)
            for name in files:
                os.chmod(os.path.join(top, name), 0o644)
        os.chmod(workdir, 0o755)
        python = os.path.realpath(sys.executable)
        self.proc = subprocess.Popen(
            [shutil.which("setpriv") or "setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", "--",
             python, os.path.join(runtime, "hostile_fire.py"), bus],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": runtime, "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/"},
            preexec_fn=die_with_parent)
        self.request = pickle.dumps((calls, seed, connections, timeout))

    def replies(self) -> list:
        out, err = self.proc.communicate(self.request, timeout=3600)
        if self.proc.returncode != 0:
            raise RuntimeError(f"the other user's sender failed ({self.proc.returncode}): {err.decode(errors='replace')[-2000:]}")
        uid, replies = pickle.loads(out)
        if uid != OTHER_UID:
            raise RuntimeError(f"the other user's sender ran as uid {uid}")
        return replies

    @staticmethod
    def possible() -> bool:
        return os.geteuid() == 0 and shutil.which("setpriv") is not None


def wire(call: Call) -> tuple:
    return (call.path, call.interface, call.member, call.signature, call.body, call.fds)


def run(calls: int, seed: int, connections: int = 4, relinkd_path: Optional[str] = None,
        memory_slack_mib: float = 16.0, other_user_share: float = 0.1, log=print) -> dict[str, Any]:
    """Runs the campaign; returns the summary (see the module's text)."""
    if relinkd_path:
        e2e_harness.RELINKD = relinkd_path
    rng = random.Random(seed)
    ran_on = commit()
    started = time.monotonic()
    violations: list[str] = []
    tag = f"[seed {seed}]"
    bench = BenchProcess("--lock", "lock")
    os.chmod(bench.dir, 0o755)   # the other user reaches DIR/bus (the socket itself is 0777)
    workdir = tempfile.mkdtemp(prefix="relink-hostile-campaign-")
    relinkd = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log"))
    root: Optional[Caller] = None
    summary: dict[str, Any] = {}
    try:
        relinkd.start()
        root = Caller(bench.bus)
        target = Target(bench, root)
        target.set_up()
        target.settled()
        last = root.central(TARGET, "LastSequence")
        before = target.snapshot()
        methods = {p: introspect(root, p) for p in target.paths()}
        gen = EveryMethod(rng, methods, target=TARGET, target_path=target.path, lock_address=bench.address("lock"),
                          lock_id=target.lock_id, peripheral_paths=[target.lock_path], last_sequence=last)
        batch = [gen.next() for _ in range(calls)]
        theirs = int(calls * other_user_share) if OtherUser.possible() else 0
        ours, others = batch[:calls - theirs], batch[calls - theirs:]
        pid = relinkd.proc.pid
        at_start = process_figures(pid)
        samples: list[dict[str, int]] = [{"calls": 0, **at_start}]
        step = max(1, len(ours) // 10)

        def sample(n: int) -> None:
            if n % step == 0:
                samples.append({"calls": n + n * theirs // max(1, len(ours)), **process_figures(pid)})
        other = OtherUser(bench.bus, workdir, [wire(c) for c in others], seed, 1, 60) if theirs else None
        calls_started = time.monotonic()
        replies = asyncio.run(fire(bench.bus, [wire(c) for c in ours], seed, connections, 60, on_done=sample))
        other_replies = other.replies() if other else []
        elapsed = time.monotonic() - calls_started

        if not relinkd.alive:
            violations.append(f"{tag} relinkd died")
        answered = list(zip(ours, replies)) + list(zip(others, other_replies))
        unanswered = [c for c, r in answered if r is None]
        if unanswered:
            violations.append(f"{tag} {len(unanswered)} calls got no reply in 60 s, e.g. {unanswered[0].describe()}")
        known_paths = set(target.paths())
        errors: collections.Counter = collections.Counter()
        other_errors: collections.Counter = collections.Counter()
        accepted: collections.Counter = collections.Counter()
        accepted_examples: list[str] = []
        odd = []
        for n, (c, r) in enumerate(answered):
            if r is None:
                continue
            is_error, name, text = r
            from_other = n >= len(ours)
            if not is_error:
                if c.read_only:
                    continue
                if from_other:
                    violations.append(f"{tag} another user's call succeeded: {c.describe()}")
                elif c.why == "hostile values":
                    label = f"{c.interface.rsplit('.', 1)[-1]}.{c.member}"
                    accepted[label] += 1
                    if accepted[label] <= 3:
                        accepted_examples.append(c.describe()[:300])
                else:
                    violations.append(f"{tag} a malformed call succeeded: {c.describe()}")
                continue
            (other_errors if from_other else errors)[name] += 1
            if not text.strip():
                violations.append(f"{tag} an error without a message: {name} for {c.describe()}")
            if from_other or c.why == "hostile values":
                allowed = None   # any error docs/api names
            elif c.interface.startswith("org.freedesktop.DBus.") and c.why == "wrong signature":
                allowed = {"org.freedesktop.DBus.Error." + n for n in ("InvalidArgs", "UnknownObject", "UnknownMethod")}
            else:
                allowed = expected_errors(c, known_paths)
            if (allowed is None and not (name.startswith("org.relink.Error.") or name in STANDARD)) \
                    or (allowed is not None and name not in allowed):
                odd.append(f"{'(other user) ' if from_other else ''}{c.describe()}\n    -> {name}: {text[:200]}")
        violations += [f"{tag} an error docs/api does not give for it: {o}" for o in odd[:20]]
        if len(odd) > 20:
            violations.append(f"{tag} ... and {len(odd) - 20} more such errors")

        if relinkd.alive:
            after = target.snapshot()
            for key in before:
                if after[key] != before[key]:
                    violations.append(f"{tag} {key} changed:\n  before {before[key]}\n  after  {after[key]}")
            # Descriptors: back to the set-up's count (a descriptor relinkd was sent and kept would stay).
            try:
                wait_until(lambda: process_figures(pid)["fds"] <= at_start["fds"], 10, "relinkd's descriptors back", 0.2)
            except Exception:
                violations.append(f"{tag} relinkd holds {process_figures(pid)['fds']} descriptors, {at_start['fds']} after set-up")
            end = process_figures(pid)
            samples.append({"calls": calls, **end})
            first = samples[1] if len(samples) > 2 else samples[0]
            if end["rss_kib"] - first["rss_kib"] > memory_slack_mib * 1024:
                violations.append(f"{tag} resident memory grew {(end['rss_kib'] - first['rss_kib']) / 1024:.1f} MiB "
                                  f"after the first tenth of the calls (bound {memory_slack_mib} MiB)")
            half = min(samples, key=lambda x: abs(x["calls"] - calls // 2))
            if end["rss_kib"] - half["rss_kib"] > memory_slack_mib * 1024 / 4:
                violations.append(f"{tag} resident memory grew {(end['rss_kib'] - half['rss_kib']) / 1024:.1f} MiB "
                                  f"over the second half of the calls (bound {memory_slack_mib / 4} MiB): not flat")
            bench.cmd("push", peripheral="lock", state="unlocked")
            try:
                wait_until(lambda: root.central(TARGET, "LastSequence") == last + 1, 10, "the next value stored")
            except Exception:
                violations.append(f"{tag} a value pushed after the calls was not stored as number {last + 1}")
        members = collections.Counter(f"{c.interface.rsplit('.', 1)[-1]}.{c.member}" for c in batch)
        summary = {
            "calls": calls, "connections": connections, "other_user_calls": theirs,
            "other_user": f"uid {OTHER_UID}" if theirs else "skipped: needs root and setpriv",
            "violations": violations,
            "seconds_calls": round(elapsed, 1), "calls_per_second": round(calls / elapsed) if elapsed else None,
            "methods_called": len(members), "per_method": dict(sorted(members.items())),
            "with_descriptors": sum(1 for c in batch if c.fds),
            "errors": dict(errors.most_common()), "other_user_errors": dict(other_errors.most_common()),
            "accepted_hostile": dict(sorted(accepted.items())), "accepted_examples": accepted_examples,
            "samples": samples,
            "rss_slope_kib_per_10k_calls": round((slope([s["calls"] for s in samples[1:]], [s["rss_kib"] for s in samples[1:]])
                                                  or 0.0) * 10_000, 1),
            "seed": seed, "commit": ran_on, "seconds": round(time.monotonic() - started, 1),
            "relinkd": e2e_harness.RELINKD,
        }
    finally:
        if root:
            root.close()
        if violations:
            log("relinkd's log, last lines:\n" + relinkd.log_tail(40))
        relinkd.kill9()
        bench.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=100_000)
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--seed", type=int, default=None, help="the random seed (default: from the clock, printed)")
    p.add_argument("--relinkd", help="the relinkd binary (default: the debug build, or $RELINKD)")
    p.add_argument("--memory-slack", type=float, default=16.0, help="MiB relinkd's memory may grow after the first tenth")
    p.add_argument("--other-user-share", type=float, default=0.1, help="the share of the calls sent by another Unix user")
    p.add_argument("--json", help="write the summary here")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"hostile calls: seed {seed}")
    return finish(run(args.calls, seed, args.connections, args.relinkd, args.memory_slack, args.other_user_share), args.json)


if __name__ == "__main__":
    sys.exit(main())
