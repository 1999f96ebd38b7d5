import BenchSupport
import DBus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A notified value is handled on the I/O thread as it is read when relinkd's
/// loop is idle, and queued behind the loop's inputs otherwise. Either way
/// each value reaches the client once, in the order the lock sent them,
/// under contiguous sequence numbers.
@Suite(.serialized, .timeLimit(.minutes(3))) struct InlineValueTests {
    @Test func valuesKeepTheirOrderAcrossAStalledLoop() async throws {
        try await Harness.with { h in
            h.killRelinkd()
            try await h.startRelinkd(environment: ["RELINK_TEST_HOOKS": "1"])
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            try await client.connectLock(central, subscribe: true)
            try await h.waitForEvents("connected", count: 1)
            let pid = try #require(h.relinkd?.pid)

            // Values while the loop is idle (taken inline), then through a
            // 3 s stall (queued) and past its end, when the queue drains
            // while new values keep coming: none may overtake a queued one.
            let values = (UInt8(1)...UInt8(220)).map { $0 }
            for value in values {
                if value == 30 { kill(pid, SIGUSR1) }
                try await h.bench.send(.pushValue("lock", hex: String(format: "%02x", value)))
                // A real-time wait that stays (Tests/README.md): the lock
                // notifies at a rate, so values arrive before, during and
                // after the 3 s stall rather than all at once.
                try await Task.sleep(for: .milliseconds(value < 30 ? 30 : 15))
            }
            try await eventually(timeout: .seconds(20), "\(values.count) values at the client") {
                APIRegisterTests.values(client.events).count >= values.count
            }
            let events = client.events.filter { $0.kind == "value-notified" }
            #expect(APIRegisterTests.values(events) == values, "each value once, in push order")
            // Every event of the identifier, values or not, numbered without a gap or a repeat.
            let sequences = client.events.map(\.sequence)
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 + 1 }, "contiguous sequence numbers: \(sequences)")
        }
    }
}
