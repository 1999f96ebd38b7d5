import Foundation
@testable import RelinkStore
import Synchronization
import Testing

@Suite("Event outbox")
struct OutboxTests {
    @Test("events keep their order and sequence numbers; acknowledgement deletes through a sequence number")
    func orderAndAcknowledgement() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("band")
        try await store.apply([.putIdentifier(Fixtures.identifier("band"))])
        var sequences: [Int64] = []
        for n in 1...5 { sequences += try await store.apply([.appendEvent(Fixtures.event(id, "e\(n)"))]).appendedSequences }
        #expect(sequences == [1, 2, 3, 4, 5])
        #expect(try await store.events(for: id).map { String(decoding: $0.payload, as: UTF8.self) } == ["e1", "e2", "e3", "e4", "e5"])
        #expect(try await store.events(for: id, after: 3).map(\.sequence) == [4, 5])

        try await store.apply([.acknowledgeEvents(id, through: 3)])
        #expect(try await store.events(for: id).map(\.sequence) == [4, 5])
        // Sequence numbers are never reused, also after everything was acknowledged.
        try await store.apply([.acknowledgeEvents(id, through: 5)])
        #expect(try await store.apply([.appendEvent(Fixtures.event(id, "e6"))]).appendedSequences == [6])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 7, pendingCount: 1, droppedTotal: 0, droppedRange: nil, firstSequence: 6))

        await #expect(throws: StoreError.invalidAcknowledgement(id, through: -1, nextSequence: 7)) {
            try await store.apply([.acknowledgeEvents(id, through: -1)])
        }
        // An Ack past what the store numbered (events the daemon numbered but
        // could not store): the next number moves above it, none is reused.
        try await store.apply([.acknowledgeEvents(id, through: 9)])
        #expect(try await store.events(for: id).isEmpty)
        #expect(try await store.apply([.appendEvent(Fixtures.event(id, "e10"))]).appendedSequences == [10])
        let ghost = try Fixtures.id("ghost")
        await #expect(throws: StoreError.unknownIdentifier(ghost)) { try await store.events(for: ghost) }
    }

    @Test("the bound drops the oldest events and records how many and which")
    func bound() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("lock")
        try await store.apply([.putIdentifier(Fixtures.identifier("lock", limit: 3))])
        for n in 1...7 { try await store.apply([.appendEvent(Fixtures.event(id, "e\(n)"))]) }
        #expect(try await store.events(for: id).map(\.sequence) == [5, 6, 7])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 8, pendingCount: 3, droppedTotal: 4, droppedRange: 1...4, firstSequence: 5))

        // Acknowledging into the dropped range narrows it; past it clears it; the total stays.
        try await store.apply([.acknowledgeEvents(id, through: 2)])
        #expect(try await store.outboxStatus(for: id).droppedRange == 3...4)
        try await store.apply([.acknowledgeEvents(id, through: 5)])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 8, pendingCount: 2, droppedTotal: 4, droppedRange: nil, firstSequence: 6))

        // Lowering the bound trims at once.
        try await store.apply([.putIdentifier(Fixtures.identifier("lock", limit: 1))])
        #expect(try await store.events(for: id).map(\.sequence) == [7])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 8, pendingCount: 1, droppedTotal: 5, droppedRange: 6...6, firstSequence: 7))
        #expect(try await store.loadState().identifiers.first?.outbox == store.outboxStatus(for: id))
    }

    @Test("events never stored are counted as dropped: total, range, and numbers never handed out again")
    func unstoredEventsCountAsDropped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("band")
        try await store.apply([.putIdentifier(Fixtures.identifier("band", limit: 10))])
        for n in 1...3 { try await store.apply([.appendEvent(Fixtures.event(id, "e\(n)"))]) }
        // Events 4...8 were numbered by relinkd but their commit failed.
        let commit = try await store.apply([.countUnstoredEvents(id, count: 5, range: 4...8)])
        #expect(commit.outboxEffects == [.unstoredCounted(id, count: 5)])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 9, pendingCount: 3, droppedTotal: 5, droppedRange: 4...8, firstSequence: 1))
        #expect(try await store.apply([.appendEvent(Fixtures.event(id, "e9"))]).appendedSequences == [9])

        // The bound then drops the oldest, below that range: one range covers both.
        try await store.apply([.putIdentifier(Fixtures.identifier("band", limit: 2))])
        #expect(try await store.events(for: id).map(\.sequence) == [3, 9])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 10, pendingCount: 2, droppedTotal: 7, droppedRange: 1...8, firstSequence: 3))
        #expect(try await store.loadState().identifiers.first?.outbox == store.outboxStatus(for: id))

        // All acknowledged past: counted only; an identifier that is gone: nothing.
        try await store.apply([.countUnstoredEvents(id, count: 2, range: nil)])
        #expect(try await store.outboxStatus(for: id).droppedTotal == 9)
        #expect(try await store.apply([.countUnstoredEvents(try Fixtures.id("gone"), count: 2, range: 1...2)]).outboxEffects.isEmpty)
    }

    @Test("a failing request in a group commit leaves the others committed")
    func groupCommitIsolation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("busy")
        try await store.apply([.putIdentifier(Fixtures.identifier("busy", limit: 100_000))])
        let ghost = try Fixtures.id("ghost")
        let outcomes = try await withThrowingTaskGroup(of: Result<[Int64], StoreError>.self) { group in
            for n in 0..<200 {
                let draft = try Fixtures.event(n % 10 == 0 ? ghost : id, "\(n)")
                group.addTask {
                    do throws(StoreError) { return .success(try await store.apply([.appendEvent(draft)]).appendedSequences) }
                    catch { return .failure(error) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let sequences = outcomes.compactMap { try? $0.get() }.flatMap { $0 }
        #expect(sequences.count == 180)
        #expect(sequences.sorted() == Array(1...180))
        #expect(outcomes.filter { if case .failure(.unknownIdentifier(ghost)) = $0 { true } else { false } }.count == 20)
        #expect(try await store.events(for: id, limit: 1000).map(\.sequence) == Array(1...180))
    }

    @Test("submit without waiting: requests apply and complete in submission order, each on its own")
    func submitOrder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("fast")
        let ghost = try Fixtures.id("ghost")
        try await store.apply([.putIdentifier(Fixtures.identifier("fast", limit: 100_000))])
        let completions = try await withCheckedThrowingContinuation { (done: CheckedContinuation<[(Int, Result<StoreCommit, StoreError>)], any Error>) in
            let seen = Mutex<[(Int, Result<StoreCommit, StoreError>)]>([])
            do {
                for n in 0..<300 {
                    // Every 7th names an unknown identifier: it fails alone.
                    let draft = try Fixtures.event(n % 7 == 3 ? ghost : id, "\(n)")
                    store.submit([.appendEvent(draft)]) { result in
                        let all = seen.withLock { $0.append((n, result)); return $0.count == 300 ? $0 : nil }
                        if let all { done.resume(returning: all) }
                    }
                }
            } catch {
                done.resume(throwing: error)
            }
        }
        #expect(completions.map(\.0) == Array(0..<300))
        let stored = completions.compactMap { n, result in (try? result.get()).map { (n, $0.appendedSequences) } }
        #expect(stored.count == 300 - 43)
        #expect(stored.flatMap(\.1) == Array(1...Int64(300 - 43)))
        #expect(completions.filter { if case .failure(.unknownIdentifier(ghost)) = $0.1 { true } else { false } }.count == 43)
        #expect(try await store.events(for: id, limit: 1000).map { String(decoding: $0.payload, as: UTF8.self) }
                == stored.map { "\($0.0)" })
        try store.close()
        // After close, a submission is refused at once.
        let refused = Mutex<Result<StoreCommit, StoreError>?>(nil)
        store.submit([.appendEvent(try Fixtures.event(id, "late"))]) { result in refused.withLock { $0 = result } }
        #expect(refused.withLock { if case .failure(.closed)? = $0 { true } else { false } })
    }
}
