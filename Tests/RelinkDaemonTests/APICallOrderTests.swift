import BenchSupport
import DBus
import Foundation
import Testing

/// D-Bus delivers a connection's messages in order; relinkd applies a
/// client's calls in that order even when the client sends them without
/// waiting for replies (issue 33: before, a burst of Subscribe/Unsubscribe
/// left the wrong subscription state, durably, in half the bursts).
@Suite(.serialized, .timeLimit(.minutes(5))) struct APICallOrderTests {
    static let command = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"

    static func central(_ path: ObjectPath, _ method: String, _ args: [DBusValue]) throws -> Message {
        try Message.methodCall(destination: "org.relink", path: path, interface: "org.relink.Central1", member: method, body: args)
    }

    /// The subscriptions a newly registering client is told of.
    static func restoredSubscriptions(_ bus: String) async throws -> DBusValue? {
        let other = try await APIClient.connect(bus)
        defer { other.close() }
        let restored = try await other.register(Harness.id).restored
        guard case .array(_, let peripherals)? = restored["peripherals"], let lock = peripherals.first,
              case .dictionary(_, _, let entries) = lock else { return nil }
        return entries.first { $0.key == .string("subscriptions") }?.value.unwrapped
    }

    @Test func pipelinedSubscribeUnsubscribeAndWritesAreAppliedInBusOrder() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            try await client.connectLock(central, subscribe: false)
            try await h.waitForEvents("connected", count: 1)
            let target: [DBusValue] = [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)]
            let subscribed = DBusValue.array(.structure([.string, .string]), [.structure([.string(Harness.lockService), .string(Harness.lockState)])])
            let none = DBusValue.array(.structure([.string, .string]), [])

            // 1,000 alternating calls, starting with Subscribe: each
            // Unsubscribe is refused unless its Subscribe came first.
            for (count, expected) in [(1_000, none), (501, subscribed)] {
                let calls = try (0..<count).map { try Self.central(central, $0 % 2 == 0 ? "Subscribe" : "Unsubscribe", target) }
                let results = try await client.connection.callPipelined(calls, timeout: .seconds(120))
                let refused = results.enumerated().compactMap { i, r -> String? in
                    if case .failure(let e) = r { "\(i): \(e)" } else { nil }
                }
                #expect(refused.isEmpty, "\(refused.count) of \(count) refused, first: \(refused.prefix(3))")
                #expect(try await Self.restoredSubscriptions(h.bench.busAddress) == expected)
            }

            // Writes to the lock's command characteristic; once all are
            // answered, a Read: the lock is in the state the last write
            // left. (Not pipelined behind them: the bench lock answers a
            // read before the writes queued ahead of it, which a real
            // peripheral's one-request-at-a-time ATT bearer never does.)
            for last in ["unlock", "lock"] {
                let calls = try (0..<41).map { i in
                    let word = (i % 2 == 0) == (last == "unlock") ? "unlock" : "lock"
                    return try Self.central(central, "Write", [target[0], target[1], .string(Self.command),
                                                               .array(.byte, Array(word.utf8).map { .byte($0) }), APIClient.options()])
                }
                let results = try await client.connection.callPipelined(calls, timeout: .seconds(60))
                for r in results { _ = try r.get() }
                let bytes = try await client.central(central, "Read", target).decode([UInt8].self)
                let state = String(decoding: bytes, as: UTF8.self)
                #expect(state == last + "ed")
            }
        }
    }
}
