import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
@testable import RelinkStore
import Restoration
import Testing

/// A store that refuses writes (a full disk) while a band streams: every
/// value is either stored or counted as dropped, at once for clients and
/// in the store once it takes writes again (issue 21, item 6).
@Suite("Daemon in-process: events a full disk could not store")
struct UnstoredEventTests {
    typealias Cycle = RestoreCycleTests

    /// The band's values pushed by the fake, numbered.
    actor Band {
        let fake: FakeBlueZ
        var pushed = 0
        init(_ fake: FakeBlueZ) { self.fake = fake }
        func push() async {
            pushed += 1
            await fake.push(Cycle.band, service: Cycle.heartRate, characteristic: Cycle.measurement, [0, UInt8(pushed % 256), UInt8(pushed / 256)])
        }
    }

    /// relinkd with the band linked and subscribed.
    static func streamingBand() async throws -> (InProcessDaemon, Band) {
        let fake = FakeBlueZ()
        await fake.add(Cycle.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Cycle.linked(d)
        return (d, Band(fake))
    }

    /// The disk fills: values go on until the store refuses them.
    static func fillDisk(_ d: InProcessDaemon, _ band: Band) async throws {
        try d.store.capSizeForTesting()
        try await eventually("the store refuses writes") {
            await band.push()
            return await d.daemon.writes.unstored.refusing
        }
    }

    @Test func everyValueIsStoredOrCountedAsDropped() async throws {
        let (d, band) = try await Self.streamingBand()
        func push() async { await band.push() }
        for _ in 0..<3 { await push() }
        try await eventually("3 values stored") { Cycle.values(try await d.events(Cycle.id)).count == 3 }

        // The disk fills: values go on until the store refuses them.
        try await Self.fillDisk(d, band)
        for _ in 0..<20 { await push() }
        try await eventually("the last pushed value was handled") {
            await d.daemon.writes.unstored.total + Int64(Cycle.values(try await d.events(Cycle.id)).count) == Int64(await band.pushed)
        }
        let unstored = await d.daemon.writes.unstored.total
        #expect(unstored >= 20)
        let cursor = try #require(await d.daemon.api.outboxes[Cycle.id])
        #expect(cursor.droppedTotal == unstored, "every value not stored is counted as dropped for clients at once")
        #expect(cursor.droppedRange != nil)
        let status = try await d.daemon.statusJSON()
        // (Whether the store refuses writes right now may have changed since:
        // a small commit can find room again; the count cannot change.)
        #expect(status.contains("\"refusingWrites\":") && status.contains("\"unstoredEvents\":\(unstored)"), "\(status)")

        // Room again: the next commit succeeds and the store counts what it lost.
        try d.store.uncapSizeForTesting()
        await push()
        try await eventually("the store counted the unstored events") {
            let stored = try await d.store.loadState().identifiers.first { $0.record.id == Cycle.id }
            return stored?.outbox.droppedTotal == unstored
        }
        let stored = try #require(try await d.store.loadState().identifiers.first { $0.record.id == Cycle.id })
        let values = Cycle.values(try await d.events(Cycle.id)).count
        #expect(Int64(values) + stored.outbox.droppedTotal == Int64(await band.pushed), "each value stored or counted, none in silence")
        let range = try #require(stored.outbox.droppedRange)
        let storedSequences = try await d.daemon.storedEvents(Cycle.id, after: 0, limit: 1000).map(\.sequence)
        #expect(stored.outbox.nextSequence > range.upperBound, "a number handed out is never handed out again")
        #expect(storedSequences.filter { range.contains($0) }.count <= values, "the range covers the numbers not stored")
        #expect(await d.daemon.writes.unstored.refusing == false)
        await d.stop()
    }

    /// Found by the fault soak's full disk (issue 37): a client acknowledges
    /// the newest event it was sent, which the full disk kept out of the
    /// store. The Ack is refused for the storage (`StoreFailed`) or taken,
    /// never `InvalidArguments` (the client did nothing wrong); once the
    /// disk has room it is taken, and that number is never handed out again.
    @Test func anEventSentButNotStoredCanBeAcknowledged() async throws {
        let (d, band) = try await Self.streamingBand()
        func push() async { await band.push() }
        try await Self.fillDisk(d, band)
        for _ in 0..<5 { await push() }
        try await eventually("the last pushed value was handled") {
            await d.daemon.writes.unstored.total + Int64(Cycle.values(try await d.events(Cycle.id)).count) == Int64(await band.pushed)
        }
        let newest = try #require(await d.daemon.api.sequencers[Cycle.id]?.next) - 1
        do {
            try await d.api(.ack(Cycle.id, through: newest))
        } catch let error as RelinkError {
            #expect(error.code == .storeFailed, "\(error)")
        }
        do {
            try await d.api(.ack(Cycle.id, through: newest + 1))
            Issue.record("an Ack past every number handed out was taken")
        } catch let error as RelinkError {
            #expect(error.code == .invalidArguments, "\(error)")
        }

        try d.store.uncapSizeForTesting()
        try await d.api(.ack(Cycle.id, through: newest))
        #expect(try await d.daemon.storedEvents(Cycle.id, after: 0, limit: 1000).allSatisfy { $0.sequence > newest })
        await push()
        try await eventually("the next value stored") { !Cycle.values(try await d.events(Cycle.id)).isEmpty }
        let sequences = try await d.daemon.storedEvents(Cycle.id, after: 0, limit: 1000).map(\.sequence)
        #expect(!sequences.isEmpty && sequences.allSatisfy { $0 > newest }, "\(sequences) after \(newest)")
        let stored = try #require(try await d.store.loadState().identifiers.first { $0.record.id == Cycle.id })
        #expect(stored.outbox.nextSequence > newest)
        await d.stop()
    }
}
