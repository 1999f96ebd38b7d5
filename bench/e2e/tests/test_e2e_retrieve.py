"""`Central1.RetrievePeripherals` and `RetrieveConnectedPeripherals` (issue
35 item 2; CoreBluetooth's retrieve calls) end to end on the simulated bench,
over the real bus and through relinkctl: a lock another identifier holds is
found by its service among the connected peripherals, then by its UUID, and
adopted with the already-connected strategy without a scan."""

import json
import os
import subprocess

from dbus_fast import Variant

from e2e_harness import CENTRAL, LOCK_SERVICE, RELINKD, DBusCallError, central_path, wait_until

LOCK = "00:00:00:00:00:02"
RELINKCTL = os.path.join(os.path.dirname(RELINKD), "relinkctl")


def relinkctl(bench, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RELINKCTL, "--bus-address", bench.bus, *args], capture_output=True, text=True, timeout=30)


def test_a_lock_held_by_another_identifier_is_retrieved_by_its_service_and_adopted(bench, relinkd, root):
    root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", ["holder", {}])
    root.call(central_path("holder"), CENTRAL, "Connect", "sa{sv}", [LOCK, {"services": Variant("as", [LOCK_SERVICE])}])
    root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}", ["adopter", {}])
    adopter = central_path("adopter")

    def connected_locks():
        return root.call(adopter, CENTRAL, "RetrieveConnectedPeripherals", "as", [[LOCK_SERVICE]])[0]
    found = wait_until(lambda: [p for p in connected_locks() if p["connected"]], 30, "the held lock among the connected")
    [lock] = found
    assert lock["address"].upper() == LOCK and LOCK_SERVICE in [s.lower() for s in lock["services"]], lock
    assert root.call(adopter, CENTRAL, "RetrieveConnectedPeripherals", "as", [["0000feed-0000-1000-8000-00805f9b34fb"]])[0] == []

    # By its UUID (and an unknown one, left out), then from relinkctl.
    unknown = "1B4E28BA-2FA1-11D2-883F-0016D3CCA427"
    [again] = root.call(adopter, CENTRAL, "RetrievePeripherals", "as", [[unknown, lock["id"], LOCK]])[0]
    assert again["id"] == lock["id"] and again["connected"] is True
    listed = relinkctl(bench, "--json", "retrieve", "adopter", "--connected", "--service", LOCK_SERVICE)
    assert listed.returncode == 0, listed.stderr
    assert [p["id"] for p in json.loads(listed.stdout)] == [lock["id"]]
    text = relinkctl(bench, "retrieve", "adopter", unknown)
    assert text.returncode == 0 and "none of them is known" in text.stdout, text
    assert relinkctl(bench, "retrieve", "adopter").returncode != 0, "nothing to ask is refused"
    try:
        root.call(adopter, CENTRAL, "RetrieveConnectedPeripherals", "as", [[]])
        raise AssertionError("an empty service list was accepted")
    except DBusCallError as e:
        assert e.name == "org.relink.Error.InvalidArguments"

    # Adopted: the already-connected strategy takes the link, no scan.
    root.call(adopter, CENTRAL, "Connect", "sa{sv}", [lock["id"], {"strategies": Variant("as", ["already-connected"])}])
    wait_until(lambda: any(k == "connected" for _, k, _ in root.events("adopter")), 30, "the adopter's connected event")
    [(_, _, payload)] = [e for e in root.events("adopter") if e[1] == "connected"]
    assert payload["connected"]["route"] in ("alreadyConnected", "sharedLink"), payload
    assert root.central("adopter", "Scanning") is False
