import Foundation
import Logging
import RelinkStore
import Testing
@testable import RelinkDaemon
import RelinkModel

/// relinkd tracks each outbox's position in memory (LastSequence,
/// Acknowledged, DroppedEvents) from the effects each commit reports,
/// instead of reading the store per event: the tracking must agree with
/// the real store, also past the bound and over skipped numbers.
@Suite struct APIOutboxCursorTests {
    @Test(arguments: [1, 2, 3])
    func cursorFollowsTheStoreThroughAppendsDropsAndAcks(seed: UInt64) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relink-cursor-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RelinkStore(directory: directory, logger: Logger(label: "test"))
        defer { try? store.close() }
        let id = try RestoreIdentifier("org.example.cursor")
        let limit = 5
        try await store.apply([.putIdentifier(try RestoreIdentifierRecord(id: id, ownerUID: 0, outboxLimit: limit, createdAt: Date()))])
        var cursor = OutboxCursor(limit: limit)
        var random = SplitMix64(seed: seed)
        var skipped = false
        for step in 0..<300 {
            let commit: StoreCommit
            if random.next() % 3 == 0, cursor.lastSequence > 0 {
                let through = Int64(random.next() % UInt64(cursor.lastSequence + 1))
                commit = try await store.apply([.acknowledgeEvents(id, through: through)])
            } else {
                var draft = try OutboxEventDraft(identifier: id, kind: "test", payload: Data("{}".utf8), createdAt: Date())
                // Now and then a number further on, as after a crash of relinkd.
                if random.next() % 10 == 0 {
                    draft.sequence = cursor.nextStored + Int64(random.next() % 20)
                    skipped = true
                }
                commit = try await store.apply([.appendEvent(draft)])
            }
            for effect in commit.outboxEffects { cursor.apply(effect) }
            let truth = OutboxCursor(try await store.outboxStatus(for: id), limit: limit)
            #expect(cursor == truth, "step \(step)")
            let stored = try await store.events(for: id, after: 0, limit: 100)
            #expect(stored.first?.sequence == cursor.first, "step \(step)")
            #expect(stored.count == cursor.pending, "step \(step)")
            #expect(stored.allSatisfy { $0.sequence > cursor.acknowledged })
            if cursor == truth { continue }
            return
        }
        #expect(cursor.droppedTotal > 0, "the bound was never reached")
        #expect(skipped)
    }
}

