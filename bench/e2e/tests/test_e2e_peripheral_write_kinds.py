"""A remote central's writes of each kind and its MTU, as relinkd's program
sees them (issue 23): each read-request and write-request carries the
`mtu` bluetoothd passed (BlueZoo: 512 for every link), each write-request
its `kind` (`command`, `request`, `reliable`: the `type` the central gave,
which the bench's BlueZoo passes on), with a program attached and while it
is away (a reliable write is then stored, then accepted, like a write with
response)."""

from e2e_harness import wait_until
from pbench_fixtures import COMMAND, DYNAMIC, IDENTIFIER
from remote_central import PeripheralProgram, RemoteCentral

BLUEZOO_MTU = 512


def request_of(event: tuple) -> int:
    return next(iter(event[2].values()))["request"]


def test_each_write_kind_and_the_mtu_reach_the_program(hub):
    c, program = hub.central, hub.program
    hub.connect()
    pending = c.read_later(hub.path(DYNAMIC))
    ev = program.wait_event("read-request")
    assert ev[2]["readRequest"]["mtu"] == BLUEZOO_MTU, ev
    program.pm("Respond", "tay", [request_of(ev), b"r"])
    assert RemoteCentral.outcome(pending.result(15)) == b"r"

    # A write request and a reliable write's part wait for the program's answer.
    for kind, offset in (("request", 0), ("reliable", 2)):
        pending = c.write_later(hub.path(COMMAND), b"\x01\x02", kind=kind, offset=offset)
        ev = program.wait_event("write-request", after=ev[0])
        w = ev[2]["writeRequest"]
        assert (w["kind"], w["withResponse"], w["offset"], w["mtu"]) == (kind, True, offset, BLUEZOO_MTU), w
        assert request_of(ev) != 0, w
        assert not pending.done(), f"the central's {kind} write waits for the program's answer"
        program.pm("Respond", "tay", [request_of(ev), b""])
        assert RemoteCentral.outcome(pending.result(15)) is None

    # A command: the program gets it already answered.
    c.write(hub.path(COMMAND), b"\x03", with_response=False)
    ev = program.wait_event("write-request", after=ev[0])
    w = ev[2]["writeRequest"]
    assert (w["kind"], w["withResponse"], w["request"], w["value"]) == ("command", False, 0, [3]), w


def test_while_the_program_is_away_each_kind_is_stored_then_accepted(hub):
    c, program = hub.central, hub.program
    hub.connect()
    program.ack_all()
    program.leave(c)
    hub.program = None
    for n, kind in enumerate(("request", "reliable", "command")):
        pending = c.write_later(hub.path(COMMAND), bytes([n]), kind=kind)
        assert RemoteCentral.outcome(pending.result(15)) is None, kind

    back = PeripheralProgram(hub.bench.bus, IDENTIFIER)
    hub.program = back
    wait_until(lambda: len([e for e in back.events() if e[1] == "write-request"]) >= 3, 30, "the three stored writes")
    writes = [e[2]["writeRequest"] for e in back.events() if e[1] == "write-request"]
    assert [(w["value"], w["kind"], w["withResponse"], w["request"], w["mtu"]) for w in writes] == [
        ([0], "request", True, 0, BLUEZOO_MTU), ([1], "reliable", True, 0, BLUEZOO_MTU), ([2], "command", False, 0, BLUEZOO_MTU)]
