import BenchSupport
import DBus
import Foundation
import Testing

/// The band (a notification stream whose values carry a counter) and the
/// lock under two identifiers in one relinkd: both links come back after a
/// SIGKILL, and no value is ever delivered twice.
@Suite(.serialized, .timeLimit(.minutes(2))) struct BandRestartTests {
    @Test func lockAndBandAreBothRestoredAndTheStreamIsNeverDoubled() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.streamBand()
            h.killRelinkd()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(30), "the band to be restored") { (try? await h.bandEvents("restored")) == 1 }
            try await h.waitForEvents("restored", count: 1)
            let before = try await h.bandCounters().count
            try await eventually(timeout: .seconds(10), "band values after the restart") { ((try? await h.bandCounters().count) ?? 0) >= before + 10 }
            try await h.bench.stopStream("band")
            try await h.waitUntilNotificationsFlow()
            let values = try await h.bandCounters()
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "band counters doubled or reordered: \(values)")
            #expect(try await h.bandEvents("disconnected") == 0, "the band's link was adopted, not torn down")
            #expect(try await h.events("disconnected").isEmpty, "the lock's link was adopted, not torn down")
        }
    }
}
