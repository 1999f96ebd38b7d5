import BenchSupport
import DBus
import Foundation
import Testing

/// Restore on register through org.relink.Manager1: the restored state
/// first, then every unacknowledged event exactly once, in order, as
/// unicast Event signals that follow the reply.
@Suite(.serialized, .timeLimit(.minutes(3))) struct APIRegisterTests {
    static let id = Harness.id

    /// Values carried by value-notified events, in order.
    static func values(_ events: [APIClient.Event]) -> [UInt8] {
        events.compactMap { ControlClient.Event(seq: $0.sequence, kind: $0.kind, payload: $0.payload).value?.first }
    }

    @Test func registerRestoresStateAndReplaysUnacknowledgedEventsOnceInOrder() async throws {
        try await Harness.with { h in
            // First client: register, connect, subscribe; receive live events.
            let first = try await APIClient.connect(h.bench.busAddress)
            let (central, restored, _) = try await first.register(Self.id)
            #expect(central.rawValue == "/org/relink/central/org_2eexample_2elock")
            #expect(restored["new"] == .boolean(true))
            #expect(restored["peripherals"] == .array(.dictionary(key: .string, value: .variant), []))
            #expect(restored["last_sequence"] == .uint64(0))
            let connectReply = try await first.central(central, "Connect", [
                .string(Harness.lockAddress), APIClient.options(["services": .array(.string, [.string(Harness.lockService)])]),
            ])
            let peripheralPath = try connectReply.decode(ObjectPath.self)
            #expect(peripheralPath.rawValue.hasPrefix("/org/relink/peripheral/"))
            try await first.central(central, "Subscribe", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
            try await eventually(timeout: .seconds(30), "a live connected Event") { first.events.contains { $0.kind == "connected" } }
            try await h.push([1, 2])
            try await eventually(timeout: .seconds(10), "live values 1, 2") { Self.values(first.events).contains(2) }
            #expect(Self.values(first.events) == [1, 2])
            #expect(first.events.allSatisfy { $0.path == central.rawValue })

            // The client goes away ("killed"); events keep being stored.
            first.close()
            try await h.push([3, 4])
            let stored = try await h.control.events(Self.id)
            let lastSequence = try #require(stored.last?.seq)

            // A new client registers: restored state, then the replay.
            let second = try await APIClient.connect(h.bench.busAddress)
            let again = try await second.register(Self.id)
            #expect(again.restored["new"] == .boolean(false))
            #expect(again.restored["last_sequence"] == .uint64(lastSequence))
            #expect(again.restored["acknowledged"] == .uint64(0))
            guard case .array(_, let peripherals)? = again.restored["peripherals"], let lock = peripherals.first,
                  case .dictionary(_, _, let entries) = lock else {
                Issue.record("no restored peripheral: \(again.restored)")
                return
            }
            let fields = Dictionary(uniqueKeysWithValues: entries.compactMap { e -> (String, DBusValue)? in
                guard case .string(let k) = e.key else { return nil }
                return (k, e.value.unwrapped)
            })
            #expect(fields["address"] == .string(Harness.lockAddress))
            #expect(fields["state"] == .string("connected"))
            #expect(fields["object"] == .objectPath(peripheralPath))
            #expect(fields["subscriptions"] == .array(.structure([.string, .string]), [.structure([.string(Harness.lockService), .string(Harness.lockState)])]))
            try await second.waitForEvents(stored.count)
            try await second.observeNoEventsBeyond(stored.count)
            let replayed = second.events
            #expect(replayed.map(\.sequence) == stored.map(\.seq), "every stored event once, in order")
            #expect(Self.values(replayed) == [1, 2, 3, 4])
            // The reply went out before the first Event (relinkd's serials are in send order).
            #expect(replayed.allSatisfy { $0.serial > again.serial }, "an Event preceded the Register reply")

            // Live events follow the replay; acknowledged ones are not replayed again.
            try await h.push([5])
            try await eventually(timeout: .seconds(10), "live value 5") { Self.values(second.events).contains(5) }
            let upTo = try #require(second.events.first { Self.values([$0]) == [3] }?.sequence)
            try await second.central(again.central, "Ack", [.uint64(upTo)])
            second.close()

            let third = try await APIClient.connect(h.bench.busAddress)
            defer { third.close() }
            let last = try await third.register(Self.id)
            #expect(last.restored["acknowledged"] == .uint64(upTo))
            let expected = try await h.control.events(Self.id).map(\.seq)
            #expect(expected.first.map { $0 > upTo } ?? false)
            try await third.waitForEvents(expected.count)
            try await third.observeNoEventsBeyond(expected.count)
            #expect(third.events.map(\.sequence) == expected)
            #expect(Self.values(third.events) == [4, 5])
            #expect(h.relinkd?.process.isRunning == true)
        }
    }

    @Test func replayAfterRelinkdWasKilled() async throws {
        try await Harness.with { h in
            let first = try await APIClient.connect(h.bench.busAddress)
            let (central, _, _) = try await first.register(Self.id)
            try await first.central(central, "Connect", [
                .string(Harness.lockAddress), APIClient.options(["services": .array(.string, [.string(Harness.lockService)])]),
            ])
            try await first.central(central, "Subscribe", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
            try await h.waitForEvents("connected", count: 1)
            try await h.push([7])
            first.close()
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitUntilNotificationsFlow()
            try await h.push([8])
            let stored = try await h.control.events(Self.id)
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let again = try await client.register(Self.id)
            #expect(again.restored["new"] == .boolean(false))
            try await client.waitForEvents(stored.count)
            try await client.observeNoEventsBeyond(stored.count)
            #expect(client.events.map(\.sequence) == stored.map(\.seq))
            #expect(Self.values(client.events).filter { $0 < Harness.firstProbe } == [7, 8])
            #expect(client.events.contains { $0.kind == "restored" })
        }
    }

    /// `event_limit`: an identifier's own bound, set at creation, changed
    /// by a later Register (a lower one drops the oldest at once, counted),
    /// durable across a SIGKILL of relinkd.
    @Test func eventLimitIsSetChangedAndKept() async throws {
        try await Harness.with { h in
            func eventLimit(_ client: APIClient, _ central: ObjectPath) async throws -> DBusValue? {
                try await client.call(central, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Central1"), .string("EventLimit")]).body.first
            }
            let first = try await APIClient.connect(h.bench.busAddress)
            defer { first.close() }
            let (central, restored, _) = try await first.register(Harness.id, ["event_limit": .uint32(3)])
            #expect(restored["new"] == .boolean(true))
            #expect(try await eventLimit(first, central) == .variant(.uint32(3)))
            try await first.connectLock(central, subscribe: true)
            try await h.waitForEvents("connected", count: 1)
            try await h.push([1, 2, 3, 4, 5])
            // Nothing acknowledged: of all events so far (connected, names,
            // the 5 values) the newest 3 are kept, the others dropped.
            func kept(_ restored: [String: DBusValue]) -> UInt64? {
                guard case .uint64(let last)? = restored["last_sequence"]?.unwrapped,
                      case .uint64(let dropped)? = restored["dropped_events"]?.unwrapped else { return nil }
                return last - dropped
            }
            let second = try await APIClient.connect(h.bench.busAddress)
            defer { second.close() }
            let again = try await second.register(Harness.id)
            #expect(kept(again.restored) == 3)
            try await second.waitForEvents(3)
            try await second.observeNoEventsBeyond(3, for: .milliseconds(200))
            #expect(second.events.count == 3)
            #expect(Self.values(second.events) == [3, 4, 5])

            // A lower bound trims at once; the change is durable.
            let third = try await APIClient.connect(h.bench.busAddress)
            defer { third.close() }
            let lowered = try await third.register(Harness.id, ["event_limit": .uint32(2), "replay": .boolean(false)])
            #expect(kept(lowered.restored) == 2)
            #expect(try await eventLimit(third, central) == .variant(.uint32(2)))
            h.killRelinkd()
            try await h.startRelinkd()
            let fourth = try await APIClient.connect(h.bench.busAddress)
            defer { fourth.close() }
            _ = try await fourth.register(Harness.id)
            #expect(try await eventLimit(fourth, central) == .variant(.uint32(2)))
            // (After a SIGKILL the numbers skip 128: count the stored events.)
            let stored = try await fourth.central(central, "Events", [.uint64(0), .uint32(100)]).body.first
            if case .array(_, let events)? = stored { #expect(events.count == 2) } else { Issue.record("Events replied \(String(describing: stored))") }
        }
    }
}
