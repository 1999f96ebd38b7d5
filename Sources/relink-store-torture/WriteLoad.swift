import Foundation
import RelinkStore
import RelinkModel

/// Concurrent clients, each on its own identifier, each sending one request
/// after the other (append an event, update its connection intent) and
/// waiting for the acknowledgement (the durable commit) before the next.
struct WriteLoad {
    let store: RelinkStore
    let clients: Int
    let seconds: Double

    struct Result {
        var rate: Double
        var p50: Duration
        var p99: Duration
    }

    func run() async throws -> Result {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(seconds * 1000))
        let start = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for client in 0..<clients {
                group.addTask { try await runClient(client, until: deadline) }
            }
            return try await group.reduce(into: [Duration]()) { $0 += $1 }
        }
        let elapsed = clock.now - start
        let sorted = latencies.sorted()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Result(rate: Double(sorted.count) / seconds, p50: sorted[sorted.count / 2], p99: sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    private func runClient(_ client: Int, until deadline: ContinuousClock.Instant) async throws -> [Duration] {
        let clock = ContinuousClock()
        let id = try RestoreIdentifier("bench.writer-\(clients)-\(client)")
        let address = try DeviceAddress(adapter: "hci1", address: String(format: "D0:00:00:00:%02X:%02X", clients, client), addressType: "public")
        let peripheral = try PeripheralRecord(id: PeripheralID(), address: address, createdAt: Date())
        var intent = try ConnectionIntent(identifier: id, peripheral: peripheral.id, requestedAt: Date())
        try await store.apply([.putIdentifier(try RestoreIdentifierRecord(id: id, ownerUID: 1000, createdAt: Date())),
                               .putPeripheral(peripheral), .putConnectionIntent(intent)])
        var latencies: [Duration] = []
        var n = 0
        while clock.now < deadline {
            n += 1
            intent.attempts = n
            let event = try OutboxEventDraft(identifier: id, kind: "value-notified", payload: Data("{\"n\":\(n)}".utf8), createdAt: Date())
            let start = clock.now
            try await store.apply([.appendEvent(event), .putConnectionIntent(intent)])
            latencies.append(clock.now - start)
        }
        return latencies
    }
}
