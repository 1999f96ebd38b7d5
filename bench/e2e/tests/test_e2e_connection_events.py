"""`Central1.RegisterForConnectionEvents` (issue 35 item 3; CoreBluetooth's
`registerForConnectionEvents(options:)`) end to end on the simulated bench,
over the real bus, through relinkctl, with relinkd SIGKILLed: an identifier
that registered for the lock's service hears another identifier's links to
the lock come up and go down, and, after a crash of relinkd, that the link
ended while relinkd was not running; the registration is in `Register`'s
`restored` and survives the crash."""

import os
import subprocess

from dbus_fast import Variant

from e2e_harness import CENTRAL, LOCK_SERVICE, RELINKD, DBusCallError, central_path, wait_until

LOCK = "00:00:00:00:00:02"
RELINKCTL = os.path.join(os.path.dirname(RELINKD), "relinkctl")


def relinkctl(bench, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RELINKCTL, "--bus-address", bench.bus, *args], capture_output=True, text=True, timeout=30)


def told(root) -> list[str]:
    """The watcher's connection events: `+ADDRESS`, `-ADDRESS reason-message`."""
    out = []
    for _, kind, payload in root.events("watcher"):
        if kind != "connection-event":
            continue
        body = payload["connectionEvent"]
        sign = "+" if body["event"] == "peer-connected" else "-"
        out.append(sign + body.get("address", {}).get("address", "?").upper()
                   + (" " + body["reason"]["message"] if "reason" in body else ""))
    return out


def lock_connected(root, bench) -> bool:
    [value] = root.call(bench.path("lock"), "org.freedesktop.DBus.Properties", "Get", "ss", ["org.bluez.Device1", "Connected"],
                        destination="org.bluez")
    return value


def registration(root) -> dict:
    _, restored = root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", ["watcher", {"replay": Variant("b", False)}])
    return restored["connection_events"]


def test_another_identifiers_links_are_told_to_a_registered_watcher_across_a_relinkd_crash(bench, relinkd, root):
    root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", ["watcher", {}])
    assert relinkctl(bench, "connection-events", "watcher").returncode != 0, "nothing to match is refused"
    registered = relinkctl(bench, "connection-events", "watcher", "--service", LOCK_SERVICE)
    assert registered.returncode == 0, registered.stderr
    assert registration(root)["services"] == [LOCK_SERVICE] and registration(root)["connected"] == []
    try:
        root.call(central_path("watcher"), CENTRAL, "RegisterForConnectionEvents", "a{sv}", [{"colour": Variant("s", "red")}])
        raise AssertionError("an unknown option was accepted")
    except DBusCallError as e:
        assert e.name == "org.relink.Error.InvalidArguments"

    root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", ["holder", {}])
    root.call(central_path("holder"), CENTRAL, "Connect", "sa{sv}", [LOCK, {"services": Variant("as", [LOCK_SERVICE])}])
    wait_until(lambda: told(root) == [f"+{LOCK}"], 60, "the watcher told the holder's link came up")
    assert len(registration(root)["connected"]) == 1

    bench.cmd("out_of_range", peripheral="lock")
    try:
        wait_until(lambda: len(told(root)) == 2, 30, "told the link went down")
        assert told(root)[1].startswith(f"-{LOCK} the link went down"), told(root)
    finally:
        bench.cmd("in_range", peripheral="lock")
    wait_until(lambda: len(told(root)) == 3, 60, "told the holder's link came up again")

    relinkd.kill9()
    bench.cmd("out_of_range", peripheral="lock")
    try:
        wait_until(lambda: lock_connected(root, bench) is False, 30,
                   "the lock's link gone while relinkd is down")
        relinkd.start()
        wait_until(lambda: len(told(root)) == 4, 30, "told the link ended while relinkd was not running")
        assert told(root)[3] == f"-{LOCK} the link went down while relinkd was not running", told(root)
        assert registration(root)["services"] == [LOCK_SERVICE], "the registration survived the crash"
    finally:
        bench.cmd("in_range", peripheral="lock")
    wait_until(lambda: len(told(root)) == 5, 60, "the holder's link back, told")
    assert told(root)[4] == f"+{LOCK}"

    stopped = relinkctl(bench, "connection-events", "watcher", "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert registration(root) == {}
