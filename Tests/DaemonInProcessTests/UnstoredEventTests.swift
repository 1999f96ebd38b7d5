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

    @Test func everyValueIsStoredOrCountedAsDropped() async throws {
        let fake = FakeBlueZ()
        await fake.add(Cycle.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Cycle.linked(d)
        var pushed = 0
        func push() async {
            pushed += 1
            await fake.push(Cycle.band, service: Cycle.heartRate, characteristic: Cycle.measurement, [0, UInt8(pushed % 256), UInt8(pushed / 256)])
        }
        for _ in 0..<3 { await push() }
        try await eventually("3 values stored") { Cycle.values(try await d.events(Cycle.id)).count == 3 }

        // The disk fills: values go on until the store refuses them.
        try d.store.capSizeForTesting()
        try await eventually("the store refuses writes") {
            await push()
            return await d.daemon.writes.unstored.refusing
        }
        for _ in 0..<20 { await push() }
        try await eventually("the last pushed value was handled") {
            await d.daemon.writes.unstored.total + Int64(Cycle.values(try await d.events(Cycle.id)).count) == Int64(pushed)
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
        #expect(Int64(values) + stored.outbox.droppedTotal == Int64(pushed), "each value stored or counted, none in silence")
        let range = try #require(stored.outbox.droppedRange)
        let storedSequences = try await d.daemon.storedEvents(Cycle.id, after: 0, limit: 1000).map(\.sequence)
        #expect(stored.outbox.nextSequence > range.upperBound, "a number handed out is never handed out again")
        #expect(storedSequences.filter { range.contains($0) }.count <= values, "the range covers the numbers not stored")
        #expect(await d.daemon.writes.unstored.refusing == false)
        await d.stop()
    }
}
