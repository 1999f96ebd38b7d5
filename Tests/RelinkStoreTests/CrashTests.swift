import Foundation
import Logging
@testable import RelinkStore
import RelinkStoreTorture
import Testing
import RelinkModel

/// The crash test of issue 5: a writer process applies the seeded mutation
/// stream and prints `ack i` after each commit; it is SIGKILLed at random
/// moments; after each kill the reopened store must equal the model after
/// exactly the acknowledged mutations, or after those plus the one in flight
/// (committed but not yet acknowledged) — never anything in between.
@Suite("Crash safety under SIGKILL")
struct CrashTests {
    @Test("SIGKILL at random moments loses no acknowledged mutation and leaves none half-applied", .timeLimit(.minutes(8)))
    func killLoop() async throws {
        let kills = Int(ProcessInfo.processInfo.environment["RELINK_STORE_KILLS"] ?? "") ?? 200
        let seed = UInt64(ProcessInfo.processInfo.environment["RELINK_STORE_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max / 2)
        let directory = try TemporaryDirectory("relink-crash")
        defer { directory.remove() }
        let torture = try TortureProcess()
        var rng = SplitMix64(seed: seed)
        var workload = TortureWorkload(seed: seed)
        var acknowledgedTotal = 0, inFlightCommitted = 0
        let clock = ContinuousClock()
        var checking = Duration.zero
        for round in 0..<kills {
            let start = workload.count
            let beforeReady = rng.next() % 10 == 0
            let delay = UInt32(rng.next() % 30_000)
            let lines = try torture.runAndKill(
                ["write", "--directory", directory.path, "--seed", "\(seed)", "--start", "\(start)"],
                waitForReady: !beforeReady, delay: delay)
            let acks = lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
            #expect(acks == Array(start..<(start + acks.count)), "acks out of order (seed \(seed), round \(round))")
            workload.advance(to: start + acks.count)
            acknowledgedTotal += acks.count

            let checkStart = clock.now
            defer { checking += clock.now - checkStart }
            let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: Logger(label: "crash-check"))
            #expect(try await store.integrityCheck() == ["ok"], "integrity (seed \(seed), round \(round))")
            let stored = try await snapshot(store)
            if stored != modelSnapshot(workload) {
                // The mutation in flight at the kill may have committed without being acknowledged.
                var next = workload
                next.advance(to: workload.count + 1)
                let matchesNext = stored == modelSnapshot(next)
                #expect(matchesNext, "store matches neither \(workload.count) nor \(workload.count + 1) mutations (seed \(seed), round \(round))")
                guard matchesNext else { try store.close(); return }
                workload = next
                inFlightCommitted += 1
            }
            try store.close()
        }
        #expect(acknowledgedTotal > kills, "the writer should make progress between kills (seed \(seed))")
        print("crash test: seed \(seed), \(kills) kills, \(acknowledgedTotal) acknowledged, \(inFlightCommitted) committed-unacknowledged, \(workload.count) mutations stored, \(checking) checking")
    }

    private struct Snapshot: Equatable {
        var state: StoredState
        var events: [RestoreIdentifier: [OutboxEvent]]
    }

    private func snapshot(_ store: RelinkStore) async throws -> Snapshot {
        Snapshot(state: try await store.loadState(), events: try await store.allEventsForTesting())
    }

    private func modelSnapshot(_ workload: TortureWorkload) -> Snapshot {
        Snapshot(state: workload.model.state, events: workload.model.events.filter { !$0.value.isEmpty })
    }
}
