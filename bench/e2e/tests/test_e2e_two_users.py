"""Two Unix users on one bus: alice (`nobody`) runs the example lock client
under her own UID; bob (`relink-e2e`, a system user scripts/setup.sh adds;
dbus-daemon refuses UIDs with no passwd entry) runs a client under his. Bob can neither list, read, change nor eavesdrop on
alice's identifier: every call naming it fails exactly as it does for an
identifier that does not exist (Register: NotPermitted), the objects do not
show, and none of its signals reach him, even with eavesdrop match rules.
Root sees and changes everything.

This module's bench has its directory opened (0755) so the other UIDs reach
the bus socket. dbus-daemon itself refuses eavesdrop match rules and
BecomeMonitor from unprivileged connections (asserted), so what is left
to relinkd is sending nothing about an identifier as a broadcast. The clients run
from a world-readable copy of themselves and dbus-fast, with the venv's
interpreter, under setpriv. Needs root (CI runs as root)."""

import asyncio
import json
import os
import pwd
import random
import shutil
import signal
import subprocess
import tempfile

import pytest
from dbus_fast import Message, MessageType, Variant

from benchproc import BenchProcess
from e2e_fuzzgen import Generator
from e2e_harness import (CENTRAL, EXAMPLE, EXAMPLE_COMMON, LOCK_SERVICE, LOCK_STATE, LOCK_COMMAND, MANAGER, PERIPHERAL, PROPS,
                         VENV_PY, Caller, LockClient, Relinkd, central_path, die_with_parent, wait_until)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="needs root and setpriv to run clients under other UIDs")

def uid_of(name: str) -> int:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return -1


ALICE = uid_of("nobody")
BOB = uid_of("relink-e2e")
ALICE_ID = "alice-lock"
BOB_ID = "bob-band"
NOWHERE_ID = "nobody-has-this"
QUIET_SERVICE = "0000feed-0000-1000-8000-00805f9b34fb"


def setpriv(uid: int) -> list[str]:
    return [shutil.which("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


@pytest.fixture(scope="module")
def bench():
    b = BenchProcess("--lock", "lock", "--band", "band")
    try:
        os.chmod(b.dir, 0o755)   # the other UIDs reach DIR/bus (the socket itself is 0777)
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="module")
def runtime():
    """A world-readable directory with the clients and dbus-fast."""
    d = tempfile.mkdtemp(prefix="relink-e2e-users-")
    os.chmod(d, 0o755)
    import dbus_fast
    shutil.copytree(os.path.dirname(dbus_fast.__file__), os.path.join(d, "dbus_fast"))
    shutil.copytree(os.path.join(EXAMPLE, "relink_lock"), os.path.join(d, "relink_lock"))
    shutil.copytree(os.path.join(EXAMPLE_COMMON, "relink_example"), os.path.join(d, "relink_example"))
    for name in ("other_user_client.py", "e2e_fuzzgen.py"):
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), d)
    # e2e_fuzzgen's path rule, beside it (the other user cannot read the checkout).
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "relinkbench", "apipaths.py"), d)
    for root_dir, dirs, files in os.walk(d):
        for n in dirs:
            os.chmod(os.path.join(root_dir, n), 0o755)
        for n in files:
            os.chmod(os.path.join(root_dir, n), 0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def user_env(runtime: str) -> dict:
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": runtime, "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/"}


class OtherUser:
    """other_user_client.py under `uid`, driven over its stdin."""

    def __init__(self, bus: str, uid: int, runtime: str):
        self.proc = subprocess.Popen(setpriv(uid) + [os.path.realpath(VENV_PY),
                                                     os.path.join(runtime, "other_user_client.py"), bus],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=user_env(runtime), cwd="/", preexec_fn=die_with_parent)

    def request(self, **req) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"other-user client died: {self.proc.stderr.read() if self.proc.stderr else ''}")
        return json.loads(line)

    def call(self, path, interface, member, signature="", body=None, destination="org.relink") -> dict:
        return self.request(op="call", path=path, interface=interface, member=member, signature=signature,
                            body=body or [], destination=destination)

    def error(self, *args, **kwargs):
        """The error name of the call, or None when it succeeded."""
        return self.call(*args, **kwargs).get("error")

    def add_match(self, rule: str) -> dict:
        return self.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s", [rule],
                         destination="org.freedesktop.DBus")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


def anonymised(message: str, identifier: str) -> str:
    return message.replace(central_path(identifier), "PATH").replace(identifier, "ID")


def attempts_on(identifier: str, lock_id: str):
    """Every Manager1/Central1 method and property access naming `identifier`."""
    path = central_path(identifier)
    gatt = [lock_id, LOCK_SERVICE, LOCK_STATE]
    v = {"$v": ["b", True]}
    return {
        "Register": ("/org/relink", MANAGER, "Register", "sa{sv}", [identifier, {}]),
        "Unregister": ("/org/relink", MANAGER, "Unregister", "s", [identifier]),
        "Scan": (path, CENTRAL, "Scan", "asa{sv}", [[LOCK_SERVICE], {}]),
        "StopScan": (path, CENTRAL, "StopScan", "", []),
        "Connect": (path, CENTRAL, "Connect", "sa{sv}", ["00:00:00:00:00:02", {}]),
        "Cancel": (path, CENTRAL, "Cancel", "s", [lock_id]),
        "Subscribe": (path, CENTRAL, "Subscribe", "sss", gatt),
        "Unsubscribe": (path, CENTRAL, "Unsubscribe", "sss", gatt),
        "Read": (path, CENTRAL, "Read", "sss", gatt),
        "Write": (path, CENTRAL, "Write", "sssaya{sv}", [lock_id, LOCK_SERVICE, LOCK_COMMAND, {"$b": b"unlock".hex()}, {}]),
        "Events": (path, CENTRAL, "Events", "tu", [0, 100]),
        "Ack": (path, CENTRAL, "Ack", "t", [1]),
        "Watch": (path, CENTRAL, "Watch", "t", [0]),
        "Unwatch": (path, CENTRAL, "Unwatch", "", []),
        "Get": (path, PROPS, "Get", "ss", [CENTRAL, "LastSequence"]),
        "GetAll": (path, PROPS, "GetAll", "s", [CENTRAL]),
        "Set": (path, PROPS, "Set", "ssv", [CENTRAL, "Scanning", v]),
        "Introspect": (path, "org.freedesktop.DBus.Introspectable", "Introspect", "", []),
        # Pairing (issue 24 item 4): the bond is the whole gateway's, the call is the identifier's owner's.
        "Pair": (path, CENTRAL, "Pair", "s", [lock_id]),
        "PairWith": (path, CENTRAL, "PairWith", "ss", [lock_id, "DisplayYesNo"]),
        "AnswerPairing": (path, CENTRAL, "AnswerPairing", "tbu", [1, True, 0]),
        "Unpair": (path, CENTRAL, "Unpair", "s", [lock_id]),
    }


class Scenario:
    """relinkd with alice's lock client (scanning, connected, subscribed) and
    bob's client (his own identifier, scanning for the band, listening to
    every signal the bus lets him), shared by the tests of this module."""

    def __init__(self, bench, runtime: str, work: str):
        self.bench = bench
        self.runtime = runtime
        self.relinkd = Relinkd(bench.bus, os.path.join(work, "state"), os.path.join(work, "relinkd.log"),
                               ["--launch-service-directory", os.path.join(bench.dir, "services")])
        self.others: list[OtherUser] = []
        self.alice = None
        self.root = None

    def user(self, uid: int) -> OtherUser:
        u = OtherUser(self.bench.bus, uid, self.runtime)
        self.others.append(u)
        return u

    def start(self) -> None:
        self.relinkd.start()
        self.root = Caller(self.bench.bus)
        self.alice = LockClient(self.bench.bus, ALICE_ID, argv_prefix=setpriv(ALICE),
                                python=os.path.realpath(VENV_PY), env=user_env(self.runtime), cwd="/")
        self.alice.wait_for(lambda l: l["type"] == "event" and l["kind"] in ("connected", "restored"), 40,
                            "alice's lock connected")
        wait_until(lambda: self.bench.cmd("push", peripheral="lock", value=b"a0".hex())
                   or any(e.get("value") == "a0" for e in self.alice.events()), 20, "alice's first value", 0.5)
        self.lock_path = self.alice.wait_for(lambda l: l["type"] == "connect", 1, "connect")["object"]
        self.lock_id = self.root.get(self.lock_path, PERIPHERAL, "Id")
        self.bob = self.user(BOB)
        assert self.bob.request(op="whoami")["uid"] == BOB
        # bob listens as widely as the bus lets him, eavesdropping included.
        for rule in ("type='signal'", "type='signal',sender='org.relink'",
                     "type='signal',interface='org.relink.Central1'"):
            assert "ok" in self.bob.add_match(rule)
        self.eavesdrop_replies = [self.bob.add_match(rule) for rule in (
            "eavesdrop='true',type='signal'", "eavesdrop='true',type='signal',interface='org.relink.Central1'")]
        # bob's own identifier, scanning for the band: his own events reach him.
        reg = self.bob.call("/org/relink", MANAGER, "Register", "sa{sv}", [BOB_ID, {}])
        assert "ok" in reg, reg
        assert self.bob.error(central_path(BOB_ID), CENTRAL, "Scan", "asa{sv}", [["180d"], {}]) is None

    def alice_state(self) -> dict:
        return {p: self.root.central(ALICE_ID, p) for p in
                ("LastSequence", "Acknowledged", "Scanning", "ScanServices", "NameRule", "DroppedEvents")}

    def stop(self) -> None:
        for u in self.others:
            u.close()
        if self.alice is not None:
            self.alice.kill9()
        if self.root is not None:
            self.root.close()
        self.relinkd.kill9()


@pytest.fixture(scope="module")
def scenario(bench, runtime):
    work = tempfile.mkdtemp(prefix="relink-e2e-users-state-")
    s = Scenario(bench, runtime, work)
    try:
        s.start()
        yield s
    finally:
        s.stop()
        shutil.rmtree(work, ignore_errors=True)


def test_users_exist():
    assert ALICE > 0 and BOB > 0, "users nobody and relink-e2e are needed: run scripts/setup.sh as root"


def test_another_user_cannot_list_alices_identifier_or_its_peripheral(scenario):
    bob, lock_path, lock_id = scenario.bob, scenario.lock_path, scenario.lock_id
    listed = bob.call("/org/relink", MANAGER, "ListIdentifiers")["ok"][0]
    assert [i for i, _ in listed] == [BOB_ID]
    objects = bob.call("/org/relink", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")["ok"][0]
    assert central_path(ALICE_ID) not in objects and lock_path not in objects, sorted(objects)
    assert central_path(BOB_ID) in objects
    status = bob.call("/org/relink", PROPS, "Get", "ss", [MANAGER, "Status"])["ok"][0]
    assert ALICE_ID not in status and lock_id.lower() not in status.lower(), status
    tree = bob.call("/org/relink/central", "org.freedesktop.DBus.Introspectable", "Introspect")
    assert central_path(ALICE_ID).rsplit("/", 1)[1] not in json.dumps(tree)
    assert central_path(BOB_ID).rsplit("/", 1)[1] in json.dumps(tree)
    assert bob.error(lock_path, PROPS, "GetAll", "s", [PERIPHERAL]) == "org.freedesktop.DBus.Error.UnknownObject"
    assert bob.error(lock_path, "org.freedesktop.DBus.Introspectable", "Introspect") == \
        "org.freedesktop.DBus.Error.UnknownObject"


def test_another_user_can_neither_read_nor_change_alices_identifier(scenario):
    bob = scenario.bob
    before = scenario.alice_state()
    for name, call in attempts_on(ALICE_ID, scenario.lock_id).items():
        got = bob.call(*call)
        if name == "Register":
            assert got.get("error") == "org.relink.Error.NotPermitted", got
        elif name == "Introspect":
            assert got.get("error") == "org.freedesktop.DBus.Error.UnknownObject" or \
                "Central1" not in json.dumps(got), got
        else:
            assert "error" in got, f"bob's {name} on alice's identifier succeeded: {got}"
            assert got["error"] in ("org.relink.Error.UnknownIdentifier",
                                    "org.freedesktop.DBus.Error.UnknownObject"), f"{name}: {got}"
    assert scenario.alice_state() == before
    # alice's client carries on undisturbed
    scenario.bench.cmd("push", peripheral="lock", value=b"after-bob".hex())
    scenario.alice.wait_for(lambda l: l["type"] == "event" and l.get("value") == "after-bob", 10,
                            "a value after bob's attempts")


def test_another_user_cannot_tell_alices_identifier_exists(scenario):
    """Every call naming alice's identifier fails exactly as for an identifier
    that does not exist: same error name, same message but for the name."""
    bob = scenario.bob
    mine, nowhere = attempts_on(ALICE_ID, scenario.lock_id), attempts_on(NOWHERE_ID, scenario.lock_id)
    differ = []
    for name, call in mine.items():
        if name == "Register":   # (for a missing identifier it would create it)
            continue
        got, unknown = bob.call(*call), bob.call(*nowhere[name])
        if "error" not in got or "error" not in unknown:
            same = got == unknown
        else:
            same = got["error"] == unknown["error"] and \
                anonymised(got["message"], ALICE_ID) == anonymised(unknown["message"], NOWHERE_ID)
        if not same:
            differ.append(f"{name}: alice's {got} / missing {unknown}")
    assert not differ, "bob can tell alice's identifier exists:\n" + "\n".join(differ)


def test_another_user_cannot_eavesdrop_alices_events(scenario):
    bob, alice = scenario.bob, scenario.alice
    assert all(r.get("error") == "org.freedesktop.DBus.Error.AccessDenied" for r in scenario.eavesdrop_replies), \
        f"the bus let bob eavesdrop: {scenario.eavesdrop_replies}"
    assert bob.error("/org/freedesktop/DBus", "org.freedesktop.DBus.Monitoring", "BecomeMonitor", "asu",
                     [[], 0], destination="org.freedesktop.DBus") is not None, "bob became a bus monitor"
    for i in (1, 2, 3):
        scenario.bench.cmd("push", peripheral="lock", value=f"a{i}".encode().hex())
    alice.wait_for(lambda l: l["type"] == "event" and l.get("value") == "a3", 10, "a3 at alice")
    heard = bob.request(op="signals", settle=1.0)["signals"]
    about_alice = [s for s in heard if s["path"] in (central_path(ALICE_ID), scenario.lock_path)
                   or ALICE_ID in json.dumps(s["body"]) or scenario.lock_id in json.dumps(s["body"])]
    assert not about_alice, f"bob received alice's signals: {about_alice[:3]}"
    # The check above could fail: bob's listener does get his own events.
    assert any(s["path"] == central_path(BOB_ID) and s["member"] == "Event" for s in heard), \
        f"bob's listener got none of his own events: {heard[:5]}"


def test_another_users_random_calls_on_alices_identifier_all_fail_and_change_nothing(scenario):
    """The fuzz generator, run by bob against alice's identifier: 2,000 seeded
    calls, every one naming alice's identifier or objects refused (nothing
    read either), every one answered, alice's state and outbox unchanged."""
    seed = int(os.environ.get("RELINK_FUZZ_SEED", random.randrange(2**32)))
    root, alice_path = scenario.root, central_path(ALICE_ID)
    before = (scenario.alice_state(), root.events(ALICE_ID, 0), root.identifiers())
    args = {"target": ALICE_ID, "target_path": alice_path, "lock_address": scenario.bench.address("lock"),
            "lock_id": scenario.lock_id, "peripheral_paths": [scenario.lock_path],
            "last_sequence": before[0]["LastSequence"]}
    out = scenario.bob.request(op="fuzz", seed=seed, count=2000, generator=args)
    calls = [c for c in (lambda g: [g.next() for _ in range(2000)])(Generator(random.Random(seed), **args))]
    print(f"bob's fuzz: seed {seed}, 2000 calls in {out['seconds']:.1f} s")
    wrong = []
    for c, reply in zip(calls, out["replies"]):
        if reply == "no-reply":
            wrong.append((c, "no reply"))
        elif reply is None and (c.path != "/org/relink" or c.member not in ("ListIdentifiers", "Get", "GetAll")):
            wrong.append((c, "succeeded"))
        elif reply is not None and c.path != "/org/relink" and reply not in (
                "org.relink.Error.UnknownIdentifier", "org.freedesktop.DBus.Error.UnknownObject",
                "org.relink.Error.InvalidArguments"):
            wrong.append((c, reply))
        elif c.member == "Register" and reply not in ("org.relink.Error.InvalidArguments",
                                                      "org.relink.Error.NotPermitted"):
            wrong.append((c, reply))
    assert not wrong, f"[seed {seed}] {len(wrong)} of bob's calls were not refused as they should be:\n" + \
        "\n".join(f"{c.describe()}\n    -> {r}" for c, r in wrong[:8])
    assert scenario.relinkd.alive
    assert (scenario.alice_state(), root.events(ALICE_ID, 0), root.identifiers()) == before


def test_another_user_can_neither_pair_nor_unpair_alices_lock_nor_tell_relinkd_knows_it(scenario):
    """Through his own identifier bob names alice's lock in Pair, PairWith and
    Unpair (docs/api/access.md, "Pairing"): each answers exactly as for a
    peripheral relinkd does not know, by address and by Peripheral1 Id, so
    bob can neither remove alice's bond nor learn that relinkd knows her lock;
    he has no pairing request of alice's to answer; alice's values go on."""
    bob, path = scenario.bob, central_path(BOB_ID)
    lock, nowhere = scenario.bench.address("lock"), "00:00:00:00:00:7E"
    unknown_id = "00000000-0000-4000-8000-000000000000"
    calls = {"Pair": ("s", lambda p: [p]), "PairWith": ("ss", lambda p: [p, "DisplayYesNo"]),
             "Unpair": ("s", lambda p: [p])}
    for member, (signature, args) in calls.items():
        for alices, missing in ((lock, nowhere), (scenario.lock_id, unknown_id)):
            got = bob.call(path, CENTRAL, member, signature, args(alices))
            unknown = bob.call(path, CENTRAL, member, signature, args(missing))
            assert unknown.get("error") == "org.relink.Error.UnknownPeripheral", f"{member}: {unknown}"
            assert got.get("error") == unknown["error"] and \
                got["message"].replace(alices, "P") == unknown["message"].replace(missing, "P"), \
                f"bob's {member} tells alice's lock apart: {got} / unknown {unknown}"
    assert bob.error(path, CENTRAL, "AnswerPairing", "tbu", [1, True, 0]) == "org.relink.Error.UnknownRequest"
    scenario.bench.cmd("push", peripheral="lock", value=b"after-pair".hex())
    scenario.alice.wait_for(lambda l: l["type"] == "event" and l.get("value") == "after-pair", 10,
                            "a value after bob's pairing calls")


def test_alices_pairing_request_reaches_only_her_and_bob_cannot_unpair_the_lock_she_uses(scenario):
    """Both users' identifiers use the lock (bob connects it too); alice's
    identifier pairs it by numeric comparison (root calls PairWith on it and
    answers for her: her example client does not answer pairing requests).
    The pairing-request event is alice's only: not in bob's outbox, and bob,
    listening to every signal the bus lets him, hears none; bob, who used
    the lock, still cannot Unpair it while alice uses it."""
    bob, root, bench = scenario.bob, scenario.root, scenario.bench
    lock, alice_path, bob_path = bench.address("lock"), central_path(ALICE_ID), central_path(BOB_ID)
    assert bob.error(bob_path, CENTRAL, "Connect", "sa{sv}", [lock, {}]) is None
    bench.cmd("set_pairing_method", peripheral="lock", method="confirmation")
    try:
        pairing = asyncio.run_coroutine_threadsafe(root.bus.call(Message(
            destination="org.relink", path=alice_path, interface=CENTRAL, member="PairWith", signature="ss",
            body=[scenario.lock_id, "DisplayYesNo"])), root.loop)
        # (her client acknowledges what it prints: the event is read from its output)
        line = scenario.alice.wait_for(lambda l: l["type"] == "event" and l["kind"] == "pairing-request", 20,
                                       "alice's pairing request at her client")
        request = line["payload"]["pairingRequest"]
        root.call(alice_path, CENTRAL, "AnswerPairing", "tbu", [request["request"], True, 0])
        reply = pairing.result(40)
        assert reply.message_type != MessageType.ERROR, reply.body
    finally:
        bench.cmd("set_pairing_method", peripheral="lock", method="just-works")
    assert root.get(scenario.lock_path, PERIPHERAL, "Paired") is True
    assert not [k for _, k, _ in root.events(BOB_ID) if k == "pairing-request"], "alice's request in bob's outbox"
    heard = bob.request(op="signals")["signals"]
    assert any(s["path"] == bob_path and s["member"] == "Event" for s in heard), "bob heard none of his own events"
    assert not [s for s in heard if "pairing-request" in json.dumps(s["body"])], "bob heard alice's pairing request"
    assert bob.call(bob_path, CENTRAL, "Unpair", "s", [lock]).get("error") == "org.relink.Error.NotPermitted"
    assert bob.error(bob_path, CENTRAL, "Cancel", "s", [lock]) is None
    got = bob.call(bob_path, CENTRAL, "Unpair", "s", [lock])
    assert got.get("error") == "org.relink.Error.NotPermitted", f"bob unpaired the lock alice uses: {got}"
    assert root.get(scenario.lock_path, PERIPHERAL, "Paired") is True


def test_control1_is_root_only(scenario):
    bob = scenario.bob
    # For anyone but root and relinkd's user, Control1 does not exist.
    assert bob.error("/org/relink/control", "org.relink.Control1", "Status") == \
        "org.freedesktop.DBus.Error.UnknownObject"
    assert bob.error("/org/relink/control", "org.relink.Control1", "Events", "st",
                     [ALICE_ID, 0]) == "org.freedesktop.DBus.Error.UnknownObject"
    assert json.loads(scenario.root.call("/org/relink/control", "org.relink.Control1", "Status")[0])


def test_alice_sees_hers_and_not_bobs(scenario):
    alice_cli = scenario.user(ALICE)
    assert alice_cli.request(op="whoami")["uid"] == ALICE
    assert [i for i, _ in alice_cli.call("/org/relink", MANAGER, "ListIdentifiers")["ok"][0]] == [ALICE_ID]
    assert "ok" in alice_cli.call(central_path(ALICE_ID), CENTRAL, "Events", "tu", [0, 10])
    assert alice_cli.error(central_path(BOB_ID), CENTRAL, "Events", "tu", [0, 10]) in \
        ("org.relink.Error.UnknownIdentifier", "org.freedesktop.DBus.Error.UnknownObject")
    assert alice_cli.error("/org/relink", MANAGER, "Register", "sa{sv}", [BOB_ID, {}]) == \
        "org.relink.Error.NotPermitted"


def test_a_broadcast_would_reach_bob(scenario):
    """The control for the eavesdropping test: had relinkd broadcast alice's
    events, bob's match rules would have caught them."""
    signal_msg = Message(message_type=MessageType.SIGNAL, path=central_path(ALICE_ID), interface=CENTRAL,
                         member="Event", signature="tss", body=[999, "value-notified", "{}"])
    root = scenario.root
    root.loop.call_soon_threadsafe(root.bus.send, signal_msg)
    heard = wait_until(lambda: [s for s in scenario.bob.request(op="signals")["signals"]
                                if s["path"] == central_path(ALICE_ID) and s["body"][:1] == [999]], 5,
                       "the broadcast at bob")
    assert heard[0]["destination"] is None


def test_root_sees_and_changes_both(scenario):
    root, lock_id = scenario.root, scenario.lock_id
    assert set(root.identifiers()) >= {ALICE_ID, BOB_ID}
    assert root.central(ALICE_ID, "Owner") == ALICE and root.central(BOB_ID, "Owner") == BOB
    assert root.call(central_path(ALICE_ID), CENTRAL, "Read", "sss", [lock_id, LOCK_SERVICE, LOCK_STATE])[0]
    assert any(k == "value-notified" for _, k, _ in root.events(ALICE_ID, 0)) or \
        root.central(ALICE_ID, "Acknowledged") > 0
    root.call(central_path(ALICE_ID), CENTRAL, "Scan", "asa{sv}", [[QUIET_SERVICE], {}])
    assert root.central(ALICE_ID, "ScanServices") == [QUIET_SERVICE]
    root.call(central_path(ALICE_ID), CENTRAL, "StopScan")
    assert root.central(ALICE_ID, "Scanning") is False
    root.call(central_path(BOB_ID), CENTRAL, "StopScan")
    assert root.central(BOB_ID, "Scanning") is False
    assert scenario.alice.terminate() == 0
    assert not any(l["type"] in ("contract", "error") for l in scenario.alice.snapshot()), scenario.alice.dump()


def test_a_user_may_have_relinkd_start_only_a_program_the_bus_runs_as_that_user(scenario):
    """docs/relaunch.md#permissions: the activation file's User= must be the
    caller's (root may name any); a name the bus cannot start is NotActivatable;
    a user's systemd unit is asked of that user's own manager only (bob has
    none running: NotReady)."""
    services = os.path.join(scenario.bench.dir, "services")
    users = {"org.relink.e2e.Bobs": "User=relink-e2e\n", "org.relink.e2e.Roots": "User=root\n", "org.relink.e2e.Nobodys": ""}
    for name, user in users.items():
        with open(os.path.join(services, f"{name}.service"), "w") as f:
            f.write(f"[D-BUS Service]\nName={name}\nExec=/bin/true\n{user}")
    root = scenario.root
    wait_until(lambda: set(users) <= set(root.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "ListActivatableNames",
                                                   destination="org.freedesktop.DBus")[0]), 10, "the bus read the files")

    def set_launch(who, identifier, name):
        spec = {"bus_name": {"$v": ["s", name]}, "wake_on": {"$v": ["as", ["write-request"]]}}
        return who.error("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [identifier, spec])
    try:
        assert set_launch(scenario.bob, BOB_ID, "org.relink.e2e.Bobs") is None
        assert set_launch(scenario.bob, BOB_ID, "org.relink.e2e.Roots") == "org.relink.Error.NotPermitted"
        assert set_launch(scenario.bob, BOB_ID, "org.relink.e2e.Nobodys") == "org.relink.Error.NotPermitted"
        assert set_launch(scenario.bob, BOB_ID, "org.relink.e2e.Missing") == "org.relink.Error.NotActivatable"
        # A unit: relinkd asks bob's own manager (systemctl --user as bob,
        # docs/relaunch.md#systemd), never the system manager; he has none running.
        unit = {"bus_name": {"$v": ["s", "org.relink.e2e.Bobs"]}, "systemd_unit": {"$v": ["s", "relink-example-lock.service"]}}
        assert scenario.bob.error("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [BOB_ID, unit]) == "org.relink.Error.NotReady"
        assert set_launch(scenario.bob, ALICE_ID, "org.relink.e2e.Bobs") == "org.relink.Error.UnknownIdentifier"
        status = json.loads(root.get("/org/relink", MANAGER, "Status"))
        bob = next(i for i in status["identifiers"] if i["id"] == BOB_ID)
        assert bob["launch"]["busName"] == "org.relink.e2e.Bobs", "the refused calls changed nothing"
        root.call("/org/relink", MANAGER, "SetLaunch", "sa{sv}",
                  [BOB_ID, {"bus_name": Variant("s", "org.relink.e2e.Roots"), "wake_on": Variant("as", ["write-request"])}])
    finally:
        root.call("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [BOB_ID, {"bus_name": Variant("s", "")}])
        for name in users:
            os.unlink(os.path.join(services, f"{name}.service"))
