"""How the example lock program (examples/python-lock) finds the lock, on the
bench with the real relinkd (issue 21, item 11): a lock that another
identifier already holds does not advertise, so the program looks among the
peripherals relinkd has a link to before it scans; a scan has a time limit,
after which the program stops it, prints a hint and exits 5; and a durable
scan left over from an earlier run is stopped by a later run that does not
need it."""

from dbus_fast import Variant

from e2e_harness import CENTRAL, LOCK_SERVICE, LOCK_STATE, PERIPHERAL, central_path, wait_until

LOCK = "00:00:00:00:00:02"
NOT_FOUND = 5


def peripheral_connected(root, address: str) -> bool:
    objects = root.call("/org/relink", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")[0]
    return any(ifaces[PERIPHERAL].get("Address") == address and ifaces[PERIPHERAL].get("Connected")
               for ifaces in objects.values() if PERIPHERAL in ifaces)


def scanning(root, identifier: str) -> bool:
    return root.central(identifier, "Scanning")


def test_lock_held_by_another_identifier_is_found_among_connected_peripherals(bench, relinkd, root, clients):
    root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", ["owner", {}])
    root.call(central_path("owner"), CENTRAL, "Connect", "sa{sv}",
              [LOCK, {"services": Variant("as", [LOCK_SERVICE])}])
    wait_until(lambda: peripheral_connected(root, LOCK), 30, "the owner's link to the lock")

    c = clients(bench.bus, "second")
    found = c.wait_for(lambda l: l["type"] in ("already-connected", "scan"), 20, "how the program looks for the lock")
    assert found["type"] == "already-connected", c.dump()
    assert found["address"] == LOCK
    sub = c.wait_for(lambda l: l["type"] == "subscribe", 10, "the subscription")
    assert sub["characteristic"] == LOCK_STATE
    assert not any(l["type"] == "scan" for l in c.snapshot()), "it scanned for a lock that cannot advertise"
    assert scanning(root, "second") is False
    [(_, path)] = [(i, p) for i, p in root.call("/org/relink", "org.relink.Manager1", "ListIdentifiers")[0]
                   if i == "second"]
    assert path == central_path("second")
    assert c.terminate() == 0


def test_scan_that_finds_nothing_stops_hints_and_exits(bench, relinkd, root, clients):
    bench.cmd("out_of_range", peripheral="lock")
    try:
        c = clients(bench.bus, "nothing-here", "--scan-timeout", "2")
        c.wait_for(lambda l: l["type"] == "scan", 20, "the scan")
        hint = c.wait_for(lambda l: l["type"] == "hint", 20, "the hint after the time limit")
        assert "already connected does not advertise" in hint["message"] and "--address" in hint["message"], hint
        assert c.proc.wait(10) == NOT_FOUND, c.dump()
        assert [l["type"] for l in c.snapshot() if l["type"] in ("stop-scan", "hint", "exit")] == \
            ["stop-scan", "hint", "exit"]
        assert scanning(root, "nothing-here") is False, "the program left its durable scan on"
    finally:
        bench.cmd("in_range", peripheral="lock")


def test_a_later_address_run_stops_the_scan_an_earlier_run_left_on(bench, relinkd, root, clients):
    bench.cmd("out_of_range", peripheral="lock")
    try:
        first = clients(bench.bus, "left-on")
        first.wait_for(lambda l: l["type"] == "scan", 20, "the first run's scan")
        wait_until(lambda: scanning(root, "left-on"), 10, "the scan stored")
        first.kill9()                  # killed while scanning: the durable scan outlives it
    finally:
        bench.cmd("in_range", peripheral="lock")
    assert scanning(root, "left-on") is True

    second = clients(bench.bus, "left-on", "--address", LOCK)
    second.wait_for(lambda l: l["type"] == "subscribe", 20, "the second run's subscription")
    stop = second.wait_for(lambda l: l["type"] == "stop-scan", 10, "the left-over scan stopped")
    assert stop["reason"] == "connecting by address"
    assert scanning(root, "left-on") is False
    connected = second.wait_for(lambda l: l["type"] == "event" and l["kind"] == "connected", 60, "the lock connected")
    assert not any(l["type"] == "current" for l in second.snapshot())

    # relinkd restarts under the program: the link comes back as `restored`,
    # and the program reads the current state (a change while relinkd was
    # down is not an event). A live client gets an event before its commit
    # (docs/api/events.md); the commit that stores `connected` (LastSequence)
    # stores the intent's connected phase with it, and only a stored phase is
    # restored as `restored`: killed before that commit, relinkd finds a
    # pending intent and reports `connected` again, as documented.
    wait_until(lambda: root.central("left-on", "LastSequence") >= connected["sequence"], 10, "the connection stored")
    relinkd.kill9()
    bench.cmd("push", peripheral="lock", state="unlocked")
    relinkd.start()
    back = second.wait_for(lambda l: l["type"] == "event" and l["kind"] == "restored", 30, "the restored link")
    current = second.wait_for(lambda l: l["type"] == "current", 10, "the current lock state read")
    assert current["sequence"] == back["sequence"]
    assert current["value"] == "unlocked"
    assert second.terminate() == 0
