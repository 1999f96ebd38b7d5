import BenchSupport
import DBus
import Foundation
import Testing

/// relinkd run as its own process on the bench, killed with SIGKILL, with
/// the lock: links, subscriptions and pending connections survive restarts
/// of relinkd and of bluetoothd, and every notified value reaches the
/// outbox exactly once.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RestartSurvivalTests {
    @Test func notifiedValuesReachTheOutboxExactlyOnce() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([1, 2, 3, 4, 5])
            let probe = try await h.waitUntilHandled()
            #expect(try await h.notifiedValues() == [1, 2, 3, 4, 5, probe])
            #expect(try await h.events("connected").count == 1)
            let seqs = try await h.control.events(Harness.id).map(\.seq)
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        }
    }

    @Test func sigkillWhileConnectedAndSubscribedAdoptsTheLink() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([10, 11])
            h.killRelinkd()
            let restart = ContinuousClock.now
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            print("figure: relinkd start to link restored (SIGKILL, lock connected): \(ContinuousClock.now - restart)")
            try await h.waitUntilNotificationsFlow()
            try await h.push([12, 13, 14])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [10, 11, 12, 13, 14])
            try await h.expectNoDuplicates()
            // Adopted, not torn down: the link never went down.
            #expect(try await h.events("disconnected").isEmpty)
            #expect(try await h.events("restored").count == 1)
            #expect(try await h.control.connectionState(Harness.id) == "connected")
        }
    }

    @Test func sigkillWhilePendingOutOfRangeConnectsWhenBackInRange() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([20])
            try await h.bench.outOfRange("lock")
            try await h.waitForEvents("disconnected", count: 1)
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitUntilLookingForTheLock()
            #expect(try await h.control.connectionState(Harness.id) != "connected")
            try await h.bench.inRange("lock")
            let back = ContinuousClock.now
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            print("figure: lock back in range to connected (pending after SIGKILL): \(ContinuousClock.now - back)")
            try await h.waitUntilNotificationsFlow()
            try await h.push([21, 22])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [20, 21, 22])
            try await h.expectNoDuplicates()
        }
    }

    @Test func sigkillWhileConnectingConnectsAfterRestart() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([60])
            try await h.holdLockConnecting()
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([61])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [60, 61])
            try await h.expectNoDuplicates()
        }
    }

    @Test func bluetoothdRestartWhilePendingConnectsWhenBackInRange() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.bench.outOfRange("lock")
            try await h.waitForEvents("disconnected", count: 1)
            try await h.bench.restartBlueZ()
            try await h.waitUntilLookingForTheLock()
            #expect(try await h.control.connectionState(Harness.id) != "connected")
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([70])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [70])
            try await h.expectNoDuplicates()
        }
    }

    @Test func bluetoothdRestartWhileConnectedReconnectsAndResubscribes() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([30])
            try await h.bench.restartBlueZ()
            try await h.waitForEvents("disconnected", count: 1)
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([31, 32])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [30, 31, 32])
            try await h.expectNoDuplicates()
        }
    }

    @Test func adapterPowerCycleWhileConnectedReconnectsAndResubscribes() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([40])
            try await h.bench.powerCycleCentral(offSeconds: 0.5)
            try await h.waitForEvents("disconnected", count: 1)
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([41, 42])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [40, 41, 42])
            try await h.expectNoDuplicates()
        }
    }

    @Test func adapterPowerCycleWhilePendingConnectsWhenBackInRange() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.bench.outOfRange("lock")
            try await h.waitForEvents("disconnected", count: 1)
            try await h.bench.powerCycleCentral(offSeconds: 0.5)
            try await h.waitUntilLookingForTheLock()
            #expect(try await h.control.connectionState(Harness.id) != "connected")
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([80])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [80])
            try await h.expectNoDuplicates()
        }
    }

    /// bluetoothd restarts while relinkd is down: the stored link is gone,
    /// relinkd reconnects in its first round and (per the core's rule) reports
    /// it `restored`, once.
    @Test func bluetoothdRestartWhileRelinkdIsDownRestoresTheLink() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([90])
            h.killRelinkd()
            try await h.bench.restartBlueZ()
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([91])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [90, 91])
            #expect(try await h.events("restored").count == 1)
            #expect(try await h.events("connected").count == 1, "only the first connection, before the restart")
            try await h.expectNoDuplicates()
        }
    }

    @Test func sigtermStopsGracefullyAndTheLinkIsRestoredAfter() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            #expect(h.stopRelinkd() == 0, "relinkd exits 0 on SIGTERM")
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            try await h.waitUntilNotificationsFlow()
            try await h.push([50])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [50])
        }
    }
}
