"""Register calls racing for one identifier (issue 37, campaign 5): eight
connections register the same new identifier at the same instant, twenty
times over. As docs/api/Manager1.md says, the identifier is created once:
exactly one reply says `new`, every reply names the same object, the
identifier is listed and stored once, and every connection is attached (each
hears the identifier's next event)."""

import asyncio

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from e2e_harness import CENTRAL, MANAGER, central_path
from relinkbench.waiting import WaitTimeout, wait_until_async

CONNECTIONS = 8
ROUNDS = 20


async def race(bus_address: str, identifier: str) -> tuple[list, list, list]:
    """Register from CONNECTIONS connections at once, without replay; returns
    the connections, the replies and, per connection, the identifier's
    `Event` signals it hears from then on."""
    buses = [await MessageBus(bus_address=bus_address, bus_type=BusType.SYSTEM).connect() for _ in range(CONNECTIONS)]
    heard = [[] for _ in buses]
    def listener(into: list):
        def on(m: Message) -> None:
            if m.message_type == MessageType.SIGNAL and m.member == "Event" and m.path == central_path(identifier):
                into.append(m)
        return on
    for bus, into in zip(buses, heard):
        bus.add_message_handler(listener(into))
    try:
        calls = [bus.call(Message(destination="org.relink", path="/org/relink", interface=MANAGER, member="Register",
                                  signature="sa{sv}", body=[identifier, {"replay": Variant("b", False)}]))
                 for bus in buses]
        replies = await asyncio.gather(*calls)
        return buses, replies, heard
    except BaseException:
        for bus in buses:
            bus.disconnect()
        raise


def test_eight_registers_racing_create_the_identifier_once_and_attach_each(bench, relinkd, root):
    async def scenario():
        for n in range(ROUNDS):
            identifier = f"race.{n}"
            buses, replies, heard = await race(bench.bus, identifier)
            try:
                errors = [r.error_name for r in replies if r.message_type == MessageType.ERROR]
                assert not errors, f"round {n}: {errors}"
                news = [r.body[1]["new"].value for r in replies]
                assert news.count(True) == 1, f"round {n}: new in {news}"
                assert {r.body[0] for r in replies} == {central_path(identifier)}
                # An event for the identifier (the lock's `connected`): each attached connection hears it.
                reply = await buses[0].call(Message(destination="org.relink", path=central_path(identifier),
                                                    interface=CENTRAL, member="Connect", signature="sa{sv}",
                                                    body=[bench.address("lock"), {}]))
                assert reply.message_type != MessageType.ERROR, reply.body
                async def every_one_heard() -> bool:
                    return all(heard)
                try:
                    await wait_until_async(every_one_heard, 20, "every connection's Event")
                except WaitTimeout:
                    raise AssertionError(f"round {n}: connections that heard no event: {[i for i, h in enumerate(heard) if not h]}")
                reply = await buses[0].call(Message(destination="org.relink", path=central_path(identifier),
                                                    interface=CENTRAL, member="Cancel", signature="s",
                                                    body=[bench.address("lock")]))
                assert reply.message_type != MessageType.ERROR, reply.body
            finally:
                for bus in buses:
                    bus.disconnect()
    asyncio.run(scenario())
    listed = [i for i in root.identifiers() if i.startswith("race.")]
    assert listed == sorted(f"race.{n}" for n in range(ROUNDS)), "each listed once"
