import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
@testable import RelinkStore
import Restoration
import Testing

/// Found by the fault soak's full disk (issue 37): a `Cancel` the store
/// refused (`StoreFailed`) had already dropped the connection intent from
/// relinkd's memory, and a `Cancel` with subscriptions was several commits,
/// so a refusal part way left some of it done. A refused `Cancel` now
/// changes nothing, in memory or on disk; once the store takes writes it
/// is one transaction.
@Suite("Daemon in-process: a Cancel the store refuses")
struct RefusedCancelTests {
    typealias Cycle = RestoreCycleTests

    static func intent(_ d: InProcessDaemon) async throws -> ConnectionIntentID {
        let peripheral = try #require(await d.daemon.peripheralID(for: Cycle.band))
        return ConnectionIntentID(identifier: Cycle.id, peripheral: peripheral)
    }

    static func cancel(_ d: InProcessDaemon) async -> RelinkError? {
        do {
            try await d.api(.cancel(Cycle.id, .address(Cycle.band)))
            return nil
        } catch let error as RelinkError {
            return error
        } catch {
            Issue.record("not a RelinkError: \(error)")
            return nil
        }
    }

    @Test func aRefusedCancelKeepsTheIntentAndItsSubscription() async throws {
        let fake = FakeBlueZ()
        await fake.add(Cycle.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Cycle.linked(d)
        let intent = try await Self.intent(d)

        try d.store.setQueryOnlyForTesting(true)
        #expect(await Self.cancel(d)?.code == .storeFailed)
        #expect(await d.daemon.core.machines[intent] != nil, "the intent is still there")
        #expect(await d.daemon.core.planner.subscriptions.contains { $0.identifier == Cycle.id }, "the subscription too")
        #expect(await d.state(Cycle.id, Cycle.band) == "connected")

        try d.store.setQueryOnlyForTesting(false)
        #expect(await Self.cancel(d) == nil)
        #expect(await d.daemon.core.machines[intent] == nil)
        #expect(await !d.daemon.core.planner.subscriptions.contains { $0.identifier == Cycle.id })
        let stored = try #require(try await d.store.loadState().identifiers.first { $0.record.id == Cycle.id })
        #expect(stored.connections.isEmpty && stored.subscriptions.isEmpty)
        await d.stop()
    }

    @Test func aRefusedCancelOfAnIntentAloneKeepsIt() async throws {
        let fake = FakeBlueZ()
        await fake.add(Cycle.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Cycle.id, uid: 0))
        try await d.submit(.connect(Cycle.id, Cycle.band, try Cycle.options(Strategy.defaultOrder)))
        try await eventually("connected") { await d.state(Cycle.id, Cycle.band) == "connected" }
        let intent = try await Self.intent(d)

        try d.store.setQueryOnlyForTesting(true)
        #expect(await Self.cancel(d)?.code == .storeFailed)
        #expect(await d.daemon.core.machines[intent] != nil, "the intent is still there")
        #expect(await d.state(Cycle.id, Cycle.band) == "connected")
        try d.store.setQueryOnlyForTesting(false)
        await d.stop()
    }
}
