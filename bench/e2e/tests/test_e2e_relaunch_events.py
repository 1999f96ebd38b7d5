"""Relaunch by D-Bus activation for the other waking events (issue 25's
Tests), with real processes as in test_e2e_relaunch.py: a notification
from the heart-rate band (the band example, relinkd and it SIGKILLed), and
a remote central's write to relinkd's hosted characteristic while the hub's
program is gone (the peripheral role; relinkd SIGKILLed meanwhile). In
each, the bus starts the program, which gets the restored state with the
launch reason, then the event, once. (A link restored after an absence is
test_e2e_relaunch.py's.)"""

import os
import subprocess
import sys

from dbus_fast import Variant

from e2e_harness import BAND_EXAMPLE, MANAGER, Caller, Relinkd, wait_until
from relinkbench.waiting import WaitTimeout
from pbench_fixtures import COMMAND, IDENTIFIER, LOCAL_NAME, RELINKD_ADDRESS, SERVICE, Hub
from remote_central import full_uuid
from conftest import disconnect_all
from test_e2e_relaunch import (crash_loop, kill_both_and_restart, link_state, lines, push, start_count, status_launch,
                                write_activation_file)

HERE = os.path.dirname(os.path.abspath(__file__))
BAND_NAME = "org.relink.example.Band"
BAND_IDENT = "relaunch-band"
BAND_ADDRESS = "00:00:00:00:00:03"
HUB_NAME = "org.relink.test.Hub"


def kill_owner(root: Caller, name: str) -> None:
    """SIGKILLs the process owning `name` on the bus (a relaunched program), if any."""
    owner = root.name_owner(name)
    if owner:
        pid = root.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", [owner],
                        destination="org.freedesktop.DBus")[0]
        os.kill(pid, 9)
        wait_until(lambda: root.name_owner(name) is None, 10, f"{name} released")


def starts(log: str) -> int:
    """The starts relinkd asked the bus for, in its journal lines."""
    return sum(1 for l in log.splitlines() if "relaunch-start" in l and "relaunch-started" not in l)


def relaunched_once(out: str, before: int, reason: dict, kind: str) -> list[dict]:
    """Waits for the relaunched program's launch reason and an event of
    `kind`; checks the order (restored state, reason, events) and that no
    event came twice. Returns the relaunched run's lines."""
    wait_until(lambda: any(l["type"] == "launch-reason" for l in lines(out)[before:]), 60,
               "the relaunched program's launch reason")
    try:
        wait_until(lambda: any(l["type"] == "event" and l["kind"] == kind for l in lines(out)[before:]), 30,
                   f"a {kind} event in the relaunched program's hands")
    except WaitTimeout as e:
        raise AssertionError(f"{e}; the relaunched program wrote: {lines(out)[before:]}") from None
    run = lines(out)[before:]
    types = [l["type"] for l in run]
    assert types.count("restored") == 1 and types.count("launch-reason") == 1, types
    assert types.index("restored") < types.index("launch-reason") < types.index("event"), types
    assert next(l for l in run if l["type"] == "launch-reason")["launch_reason"] == reason
    seqs = [l["sequence"] for l in run if l["type"] == "event"]
    assert seqs == sorted(set(seqs)), f"an event twice or out of order: {seqs}"
    return run


def test_a_band_notification_relaunches_the_band_client_after_both_were_killed(bench, workdir, root):
    out = os.path.join(workdir, "band.jsonl")
    argv = [os.path.join(BAND_EXAMPLE, "relink-band"), "--bus", bench.bus, "--identifier", BAND_IDENT,
            "--address", BAND_ADDRESS, "--json", "--output", out, "--bus-name", BAND_NAME, "--wake-on", "value-notified"]
    service = write_activation_file(bench, BAND_NAME, " ".join(argv))
    d = Relinkd(bench.bus, os.path.join(workdir, "state"), os.path.join(workdir, "relinkd.log")).start()
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: sum(1 for l in lines(out) if l["type"] == "event" and l["kind"] == "value-notified") >= 2, 30,
                   "the first run's heart-rate values")
        assert status_launch(root, BAND_IDENT)["busName"] == BAND_NAME
        before = kill_both_and_restart(d, first, root, BAND_NAME, out)
        # The band streams: relinkd restores the link and the subscription,
        # the next value is committed with no client attached, the bus starts the client.
        run = relaunched_once(out, before, {"bus_name": BAND_NAME, "identifiers": [BAND_IDENT],
                                            "events": ["value-notified"]}, "value-notified")
        assert root.name_owner(BAND_NAME) is not None, "the relaunched client owns its name"
        assert [l["kind"] for l in run if l["type"] == "event"][:1] == ["restored"], \
            "the stored events from the first: the link restored, then values"
        assert starts(d.log_tail(4000)) == 1, "one start for the stream of values\n" + d.log_tail(80)
    finally:
        kill_owner(root, BAND_NAME)
        first.kill()
        d.kill9()
        os.unlink(service)


def test_a_centrals_write_relaunches_the_peripheral_program_with_the_reason_then_the_write_once(hub):
    c, root = hub.central, hub.program
    out = os.path.join(hub.dir, "hub.jsonl")
    argv = [sys.executable, os.path.join(HERE, "relaunched_program.py"), "--bus", hub.bench.bus,
            "--identifier", IDENTIFIER, "--bus-name", HUB_NAME, "--output", out]
    service = write_activation_file(hub.bench, HUB_NAME, " ".join(argv))
    try:
        # (The bus reads the new activation file when inotify tells it.)
        wait_until(lambda: root.error_of("/org/relink", MANAGER, "SetLaunch", "sa{sv}", [IDENTIFIER, {
            "bus_name": Variant("s", HUB_NAME), "wake_on": Variant("as", ["write-request"])}]) is None, 10,
            "the launch spec set")
        hub.connect()
        root.ack_all()
        observer = Caller(hub.bench.bus)
        try:
            root.leave(observer)
            hub.program = None
            # relinkd SIGKILLed and started again while the program is gone.
            hub.relinkd.kill9()
            hub.relinkd.start()
            assert observer.name_owner(HUB_NAME) is None, "nothing woke the program yet"
            if not c.connected(RELINKD_ADDRESS):
                c.forget(RELINKD_ADDRESS)
                c.discover(LOCAL_NAME)
                c.connect(RELINKD_ADDRESS)
            wait_until(lambda: full_uuid(SERVICE) in c.services(RELINKD_ADDRESS), 20, "the hub's service found again")
            # The central writes: relinkd stores it (no program), and has the bus start the program.
            c.write(hub.path(COMMAND), b"\x2a", with_response=True)
            run = relaunched_once(out, 0, {"bus_name": HUB_NAME, "identifiers": [IDENTIFIER],
                                           "events": ["write-request"]}, "write-request")
            writes = [l["payload"]["writeRequest"]["value"] for l in run if l["type"] == "event"
                      and l["kind"] == "write-request"]
            assert writes == [[0x2a]], f"the write, once: {writes}"
            assert observer.name_owner(HUB_NAME) is not None, "the relaunched program owns its name"
            assert starts(hub.relinkd.log_tail(4000)) == 1, hub.relinkd.log_tail(80)
        finally:
            kill_owner(observer, HUB_NAME)
            observer.close()
    finally:
        os.unlink(service)


def test_a_crash_loop_is_started_at_most_five_times_in_the_window_across_a_relinkd_restart(bench, workdir, root):
    starts, service, d = crash_loop(bench, root, workdir, "org.relink.example.CrashRestart")
    try:
        wait_until(lambda: start_count(starts) >= 2, 30, "two starts")
        # relinkd SIGKILLed in the middle of the burst and started again: the
        # starts it made are in its store (launch_start) and still count.
        d.kill9()
        d.start()
        wait_until(lambda: link_state(root, "crash-loop") == "connected", 30, "the link restored")
        wait_until(lambda: push(bench, "knock") or status_launch(root, "crash-loop").get("state") == "limited", 40,
                   "the start limit reached after the restart", 0.5)
        count = start_count(starts)
        assert count == 5, f"started {count} times in the window, relinkd restart included\n" + d.log_tail(80)
        assert status_launch(root, "crash-loop")["startsInWindow"] == 5
    finally:
        d.kill9()
        os.unlink(service)
        disconnect_all(bench)
