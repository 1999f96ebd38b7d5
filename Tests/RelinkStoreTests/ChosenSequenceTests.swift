import Foundation
@testable import RelinkStore
import Testing

/// relinkd numbers events itself (to show them before their commit): the
/// store keeps those numbers, never takes one below its next, reports what
/// each commit did to the outbox, and says whether the last run stopped cleanly.
@Suite("Chosen sequence numbers, outbox effects, clean-stop marker")
struct ChosenSequenceTests {
    @Test("a chosen number is kept, may skip ahead, and may never go back")
    func chosenNumbers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("band")
        try await store.apply([.putIdentifier(Fixtures.identifier("band", limit: 3))])
        func draft(_ text: String, _ sequence: Int64?) throws -> OutboxEventDraft {
            var d = try Fixtures.event(id, text)
            d.sequence = sequence
            return d
        }
        let first = try await store.apply([.appendEvent(try draft("a", 1)), .appendEvent(try draft("b", 2))])
        #expect(first.appendedSequences == [1, 2])
        #expect(first.outboxEffects == [.appended(id, sequence: 1), .appended(id, sequence: 2)])
        // A skip (after a crash relinkd continues higher), then the store's own numbering follows it.
        #expect(try await store.apply([.appendEvent(try draft("c", 130))]).appendedSequences == [130])
        #expect(try await store.apply([.appendEvent(try draft("d", nil))]).appendedSequences == [131])
        #expect(try await store.events(for: id).map(\.sequence) == [2, 130, 131])
        #expect(try await store.outboxStatus(for: id) == OutboxStatus(nextSequence: 132, pendingCount: 3, droppedTotal: 1,
                                                                          droppedRange: 1...1, firstSequence: 2))
        // Below the next number: refused, nothing stored.
        await #expect(throws: StoreError.self) { try await store.apply([.appendEvent(try draft("old", 131))]) }
        #expect(try await store.events(for: id).map(\.sequence) == [2, 130, 131])

        // The bound over a gap, then an acknowledgement, as effects.
        let bound = try await store.apply([.appendEvent(try draft("e", 200))])
        #expect(bound.outboxEffects == [.appended(id, sequence: 200), .dropped(id, count: 1, range: 2...2, first: 130)])
        let ack = try await store.apply([.acknowledgeEvents(id, through: 150)])
        #expect(ack.outboxEffects == [.acknowledged(id, through: 150, deleted: 2, first: 200)])
        #expect(try await store.loadState().identifiers.first?.outbox == store.outboxStatus(for: id))
    }

    @Test("the clean-stop marker: set by a marked close, consumed by the next open, absent after a crash")
    func cleanStopMarker() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.path + "/" + CleanStopMarker.fileName
        var store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        #expect(!store.openedAfterCleanStop, "a new store")
        try store.close(markingCleanStop: true)
        #expect(FileManager.default.fileExists(atPath: marker))

        store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        #expect(store.openedAfterCleanStop)
        #expect(!FileManager.default.fileExists(atPath: marker), "consumed at open, before anything is written")
        try store.close()  // unmarked: as after a crash

        store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        #expect(!store.openedAfterCleanStop)
        try store.close()
    }
}
