"""`notification-state` events (issue 35, item 1; CoreBluetooth's
`peripheral(_:didUpdateNotificationStateFor:error:)`) end to end on the
simulated bench, with the real relinkd and the example lock client as
separate processes: the client's subscription is told notifying once the
link's StartNotify is confirmed, stopped with the link's failure when the
lock leaves range, notifying again when it is back and after relinkd is
SIGKILLed and restarted; `Register`'s `restored` lists what notifies now."""

from dbus_fast import Variant

from e2e_harness import LOCK_SERVICE, LOCK_STATE, wait_until

IDENT = "e2e-notification-state"


def states(client) -> list[str]:
    """The notification-state events in the client's hands, in order."""
    told = []
    for event in client.events():
        if event["kind"] != "notification-state":
            continue
        body = event["payload"]["notificationState"]
        assert [body["characteristic"]["service"], body["characteristic"]["characteristic"]] == [LOCK_SERVICE, LOCK_STATE]
        told.append("notifying" if body["notifying"] else f"stopped {body.get('reason', {}).get('errorName', '')}")
    return told


def notifying(root) -> list:
    """`Register`'s `notifying` for the lock (a re-registration without replay)."""
    _, restored = root.call("/org/relink", "org.relink.Manager1", "Register", "sa{sv}",
                            [IDENT, {"replay": Variant("b", False)}])
    [lock] = [p for p in restored["peripherals"] if p["address"].upper() == "00:00:00:00:00:02"]
    return [[s.lower(), c.lower()] for s, c in lock["notifying"]]


def test_notifications_are_told_as_they_start_and_stop_across_range_and_a_relinkd_crash(bench, relinkd, root, clients):
    client = clients(bench.bus, IDENT)
    client.wait_for(lambda l: l["type"] == "subscribe", 30, "the subscription")
    wait_until(lambda: states(client) == ["notifying"], 30, "told the lock's notifications flow")
    assert notifying(root) == [[LOCK_SERVICE, LOCK_STATE]]

    bench.cmd("out_of_range", peripheral="lock")
    try:
        wait_until(lambda: states(client)[-1:] == ["stopped org.relink.Error.LinkLost"], 30, "told they stopped with the link")
        assert notifying(root) == []
        client.wait_for(lambda l: l["type"] == "event" and l["kind"] == "disconnected", 30, "the link's disconnected")
        kinds = [e["kind"] for e in client.events()]
        stopped = max(i for i, k in enumerate(kinds) if k == "notification-state")
        assert kinds.index("disconnected") > stopped, f"told before the link's disconnected: {kinds}"
    finally:
        bench.cmd("in_range", peripheral="lock")
    wait_until(lambda: states(client)[-1:] == ["notifying"], 60, "told they flow again on the new link")
    assert states(client) == ["notifying", "stopped org.relink.Error.LinkLost", "notifying"]

    relinkd.kill9()
    relinkd.start()
    # Nobody was told they stopped (relinkd was not running); the restored link's StartNotify is.
    wait_until(lambda: len(states(client)) == 4, 60, "told they flow after relinkd's restart")
    assert states(client)[-1] == "notifying"
    assert notifying(root) == [[LOCK_SERVICE, LOCK_STATE]]
