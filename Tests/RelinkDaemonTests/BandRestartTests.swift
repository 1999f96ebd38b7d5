import BenchSupport
import DBus
import Foundation
import Testing

/// The band (a notification stream whose values carry a counter) and the
/// lock under two identifiers in one relinkd: both links come back after a
/// SIGKILL, and no value is ever delivered twice.
@Suite(.serialized, .timeLimit(.minutes(2))) struct BandRestartTests {
    static let bandID = "org.example.band"
    static let bandAddress = "00:00:00:00:00:03"
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"
    static let measurement = "00002a37-0000-1000-8000-00805f9b34fb"

    /// The band's counters in the band identifier's outbox, in order.
    func counters(_ h: Harness) async throws -> [UInt32] {
        try await h.control.events(Self.bandID).compactMap { event in
            guard let bytes = event.value, bytes.count >= 6 else { return nil }
            return UInt32(bytes[2]) | UInt32(bytes[3]) << 8 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 24
        }
    }

    func bandEvents(_ h: Harness, _ kind: String) async throws -> Int {
        try await h.control.events(Self.bandID).filter { $0.kind == kind }.count
    }

    @Test func lockAndBandAreBothRestoredAndTheStreamIsNeverDoubled() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.control.register(Self.bandID)
            try await h.control.connect(Self.bandID, Self.bandAddress, services: [Self.heartRate])
            try await h.control.subscribe(Self.bandID, Self.bandAddress, Self.heartRate, Self.measurement)
            try await eventually(timeout: .seconds(30), "the band to connect") { (try? await bandEvents(h, "connected")) == 1 }
            try await h.bench.startStream("band", rate: 20)
            try await eventually(timeout: .seconds(10), "band values") { ((try? await counters(h).count) ?? 0) >= 10 }
            h.killRelinkd()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(30), "the band to be restored") { (try? await bandEvents(h, "restored")) == 1 }
            try await h.waitForEvents("restored", count: 1)
            let before = try await counters(h).count
            try await eventually(timeout: .seconds(10), "band values after the restart") { ((try? await counters(h).count) ?? 0) >= before + 10 }
            try await h.bench.stopStream("band")
            try await h.waitUntilNotificationsFlow()
            let values = try await counters(h)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "band counters doubled or reordered: \(values)")
            #expect(try await bandEvents(h, "disconnected") == 0, "the band's link was adopted, not torn down")
            #expect(try await h.events("disconnected").isEmpty, "the lock's link was adopted, not torn down")
        }
    }
}
