"""UpdateValues (issue 23): a program sends up to 16 updates in one call; a
subscribed remote central gets every value once, in order, the calls not
taken whole sent again after ready-to-update."""

from e2e_harness import wait_until
from pbench_fixtures import SERVICE, STREAM


def test_batches_of_updates_reach_the_subscribed_central_in_order(hub):
    c, program = hub.central, hub.program
    hub.connect()
    c.start_notify(hub.path(STREAM))
    ev = program.wait_event("subscribed")
    sent = [bytes([i]) for i in range(64)]
    n, readies = 0, 0
    while n < len(sent):
        batch = sent[n:n + 16]
        try:
            taken = program.pm("UpdateValues", "ssaay", [SERVICE, STREAM, batch])[0]
        except Exception as e:   # UpdateQueueFull: nothing taken
            assert "UpdateQueueFull" in str(e), e
            taken = 0
        assert 0 <= taken <= len(batch)
        n += taken
        if taken < len(batch):
            readies += 1
            ev = program.wait_event("ready-to-update", after=ev[0], timeout=30)
    wait_until(lambda: len(c.notifications(hub.path(STREAM))) >= len(sent), 30, "every value at the central")
    assert c.notifications(hub.path(STREAM)) == sent
