"""Relaunch by D-Bus activation (docs/relaunch.md), with real processes: the
bench's private dbus-daemon reads activation files from DIR/services; the
example lock client (examples/python-lock) registers with a launch spec
(`--bus-name`, `--wake-on value-notified`). It is SIGKILLed, relinkd is
SIGKILLed and started again, a lock value is pushed: relinkd has the bus
start the client, which gets the restored state with the launch reason and
then the value, once; a link back after an absence relaunches it the same
way, `connected` as the reason. A program that exits at once is started at most 5
times in the 30 s window (RelaunchLimits.standard), and `Status` says so."""

import itertools
import json
import os

import subprocess

from conftest import disconnect_all
from dbus_fast import Variant
from e2e_harness import CENTRAL, EXAMPLE, MANAGER, Caller, Relinkd, wait_until

NAME = "org.relink.example.Lock"
IDENT = "relaunch-lock"
LOCK_ADDRESS = "00:00:00:00:00:02"
LAUNCHER = os.path.join(EXAMPLE, "relink-lock")


def services_dir(bench) -> str:
    """The bench bus's service directory (relinkbench/busconf.py)."""
    return os.path.join(os.path.dirname(bench.bus.split("=", 1)[1]), "services")


def write_activation_file(bench, name: str, exec_line: str) -> str:
    path = os.path.join(services_dir(bench), f"{name}.service")
    with open(path, "w") as f:
        f.write(f"[D-BUS Service]\nName={name}\nExec={exec_line}\n")
    return path


def lines(path: str) -> list[dict]:
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip()]
    except OSError:
        return []


def push(bench, text: str) -> None:
    bench.cmd("push", peripheral="lock", value=text.encode().hex())


def status_entry(root: Caller, identifier: str) -> dict:
    status = json.loads(root.get("/org/relink", MANAGER, "Status"))
    return next((i for i in status["identifiers"] if i["id"] == identifier), {})


def link_state(root: Caller, identifier: str) -> str:
    connections = status_entry(root, identifier).get("connections", [])
    return connections[0]["state"] if connections else "none"


def status_launch(root: Caller, identifier: str) -> dict:
    return status_entry(root, identifier).get("launch", {})


def relaunchable(bench, workdir: str, wake_on: str) -> tuple[str, list[str], str, Relinkd]:
    """The example lock client's command line (its JSON lines to `out`),
    its activation file in the bench bus's service directory, and relinkd
    started: (out, argv, activation file, relinkd)."""
    out = os.path.join(workdir, "client.jsonl")
    argv = [LAUNCHER, "--bus", bench.bus, "--identifier", IDENT, "--address", LOCK_ADDRESS, "--json",
            "--output", out, "--bus-name", NAME, "--wake-on", wake_on]
    service = write_activation_file(bench, NAME, " ".join(argv))
    d = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log")).start()
    return out, argv, service, d


def first_run(argv: list[str], out: str) -> subprocess.Popen:
    """The client's first run, started by hand, once its lock is connected."""
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: any(l["type"] == "event" and l["kind"] == "connected" for l in lines(out)), 30,
               "the first run's lock connected")
    return first


def tear_down(bench, root: Caller, d: Relinkd, service: str) -> None:
    """Kills a relaunched client still on the bus and relinkd, removes the activation file."""
    owner = root.name_owner(NAME)
    if owner:
        pid = root.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", [owner],
                        destination="org.freedesktop.DBus")[0]
        os.kill(pid, 9)
    d.kill9()
    os.unlink(service)
    disconnect_all(bench)


def kill_both_and_restart(d: Relinkd, client: subprocess.Popen, root: Caller, name: str, out: str) -> int:
    """SIGKILLs relinkd, then the client (relinkd first: a value still on
    its way after the client's death would rightly have it started again at
    once), waits until the client's bus name is released and starts relinkd
    again. Returns how many lines the client had printed."""
    d.kill9()
    client.kill()
    client.wait(10)
    wait_until(lambda: root.name_owner(name) is None, 10, "the client's bus name released")
    before = len(lines(out))
    d.start()
    return before


def value_relaunched(out: str, before: int, value: str, reason: dict) -> list[dict]:
    """Waits until the relaunched lock client (its lines in `out` after the
    first `before`) has its launch reason and `value`; checks the order
    (restored state, reason, events), the reason, and the value once.
    Returns the relaunched run's lines."""
    wait_until(lambda: any(l["type"] == "launch-reason" for l in lines(out)[before:]), 60,
               "the relaunched client's launch reason")
    wait_until(lambda: any(l.get("value") == value for l in lines(out)[before:]), 20,
               "the value in the relaunched client's hands")
    second = lines(out)[before:]
    kinds = [l["type"] for l in second]
    assert kinds.index("restored") < kinds.index("launch-reason") < kinds.index("event"), kinds
    assert next(l for l in second if l["type"] == "launch-reason")["launch_reason"] == reason
    values = [l.get("value") for l in second if l["type"] == "event" and l["kind"] == "value-notified"]
    assert values.count(value) == 1, values
    return second


def test_relaunched_by_the_bus_after_both_were_killed_gets_the_reason_then_the_value_once(bench, workdir, root):
    out, argv, service, d = relaunchable(bench, workdir, "value-notified")
    try:
        # The first run, started by hand: registers with its launch spec, connects, subscribes.
        first = first_run(argv, out)
        wait_until(lambda: push(bench, "live") or any(l.get("value") == "live" for l in lines(out)), 20,
                   "a live value in the first run", 0.5)
        assert status_launch(root, IDENT)["busName"] == NAME
        # The first run's events (its live value may still be unacknowledged:
        # the client acknowledges later) are not the value pushed below.
        stored_before = max((seq for seq, _, _ in root.events(IDENT)), default=0)
        before = kill_both_and_restart(d, first, root, NAME, out)
        wait_until(lambda: link_state(root, IDENT) == "connected", 30, "the link restored")
        assert root.name_owner(NAME) is None, "`restored` does not wake this spec: nothing started\n" + d.log_tail(60)
        # The lock notifies: no client is attached, so relinkd has the bus start it.
        # A new value on each try (the first may come before the subscription
        # is armed again): the same one pushed again after a fast relaunch had
        # acknowledged it would rightly arrive twice.
        tries, pushed = itertools.count(), []

        def push_new() -> bool:
            pushed.append(f"door-open-{next(tries)}")
            push(bench, pushed[-1])
            return False

        def delivered() -> list:
            return [l.get("value") for l in lines(out)[before:]
                    if l["type"] == "event" and l["kind"] == "value-notified" and l.get("value") in pushed]

        wait_until(lambda: any(k == "value-notified" for _, k, _ in root.events(IDENT, after=stored_before)) or delivered() or push_new(),
                   20, "a value stored or delivered", 0.5)
        wait_until(lambda: delivered(), 60, "a value in the relaunched client's hands")
        second = value_relaunched(out, before, delivered()[0], {"bus_name": NAME, "identifiers": [IDENT],
                                                                "events": ["value-notified"]})
        assert len(delivered()) == len(set(delivered())), f"a value twice: {delivered()}"
        seqs = [l["sequence"] for l in second if l["type"] == "event"]
        assert len(seqs) == len(set(seqs)), f"an event twice: {seqs}"
        assert root.name_owner(NAME) is not None, "the relaunched client owns its name"
        assert "relaunch-registered" in d.log_tail(400)
    finally:
        tear_down(bench, root, d, service)


def test_a_link_back_after_an_absence_relaunches_the_client_with_connected_as_the_reason(bench, workdir, root):
    out, argv, service, d = relaunchable(bench, workdir, "connected")
    try:
        first = first_run(argv, out)
        bench.cmd("out_of_range", peripheral="lock")
        wait_until(lambda: any(l["type"] == "event" and l["kind"] == "disconnected" for l in lines(out)), 30,
                   "the link lost, in the first run's hands")
        first.kill()
        first.wait(10)
        wait_until(lambda: root.name_owner(NAME) is None, 10, "the client's bus name released")
        before = len(lines(out))
        assert root.name_owner(NAME) is None, "`disconnected` does not wake this spec"
        bench.cmd("in_range", peripheral="lock")
        wait_until(lambda: any(l["type"] == "launch-reason" for l in lines(out)[before:]), 60,
                   "the relaunched client's launch reason")
        second = lines(out)[before:]
        reason = next(l for l in second if l["type"] == "launch-reason")["launch_reason"]
        assert reason == {"bus_name": NAME, "identifiers": [IDENT], "events": ["connected"]}
        # The lock's subscription is told notifying on the new link (a
        # `notification-state` after `connected`, which wakes nobody here).
        wait_until(lambda: "connected" in [l["kind"] for l in lines(out)[before:] if l["type"] == "event"], 20,
                   "the connected event in its hands")
        events = [l for l in lines(out)[before:] if l["type"] == "event"]
        kinds = [l["kind"] for l in events if l["kind"] != "notification-state"]
        assert kinds == ["connected"], f"only the unacknowledged event, once: {kinds}"
        seqs = [l["sequence"] for l in events]
        assert len(seqs) == len(set(seqs)), f"an event twice: {seqs}"
    finally:
        bench.cmd("in_range", peripheral="lock")
        tear_down(bench, root, d, service)


def crash_loop(bench, root: Caller, workdir: str, name: str) -> tuple[str, str, Relinkd]:
    """A program that exits at once, named `name` by the activation file,
    as the launch spec of "crash-loop" (waking on values) with the lock
    connected and subscribed, no client attached, a value stored: relinkd
    starts it. Returns (its file of starts, the activation file, relinkd)."""
    starts = os.path.join(workdir, "starts")
    service = write_activation_file(bench, name, f"/bin/sh -c \"echo start >> {starts}; exit 1\"")
    d = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log")).start()
    central = root.call("/org/relink", MANAGER, "Register", "sa{sv}", ["crash-loop", {}])[0]
    root.call("/org/relink", MANAGER, "SetLaunch", "sa{sv}",
              ["crash-loop", {"bus_name": Variant("s", name), "wake_on": Variant("as", ["value-notified"])}])
    root.call(central, CENTRAL, "Connect", "sa{sv}", [LOCK_ADDRESS, {}])
    root.call(central, CENTRAL, "Subscribe", "sss", [LOCK_ADDRESS, "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b",
                                                     "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"])
    wait_until(lambda: any(k == "connected" for _, k, _ in root.events("crash-loop")), 30, "the lock connected")
    root.call(central, CENTRAL, "Unwatch")   # no client attached any more
    wait_until(lambda: push(bench, "knock") or any(k == "value-notified" for _, k, _ in root.events("crash-loop")),
               20, "a value stored", 0.5)
    return starts, service, d


def start_count(starts: str) -> int:
    try:
        with open(starts) as f:
            return len(f.read().split())
    except OSError:
        return 0


def test_a_program_that_exits_at_once_is_started_at_most_five_times_in_the_window(bench, workdir, root):
    name = "org.relink.example.Crash"
    starts, service, d = crash_loop(bench, root, workdir, name)
    try:
        # Retries after 0.5, 1, 2 and 4 s; the sixth would be due at about 15.5 s: limited.
        wait_until(lambda: status_launch(root, "crash-loop").get("state") == "limited", 40, "the start limit reached")
        count = start_count(starts)
        assert count == 5, f"started {count} times"
        launch = status_launch(root, "crash-loop")
        assert launch["startsInWindow"] == 5 and "Spawn" in launch.get("lastError", ""), launch
        log = d.log_tail(2000)
        assert "relaunch-limit-reached" in log and name in log
    finally:
        d.kill9()
        os.unlink(service)
        disconnect_all(bench)
