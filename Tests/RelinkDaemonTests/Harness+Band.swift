import BenchSupport
import Foundation
import Testing

/// The band under its own identifier: a heart-rate stream whose values
/// carry a u32 counter, so lost and doubled notifications show.
extension Harness {
    static let bandID = "org.example.band"
    static let bandAddress = "00:00:00:00:00:03"
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"
    static let measurement = "00002a37-0000-1000-8000-00805f9b34fb"

    /// The band's counters in its identifier's outbox, in outbox order.
    func bandCounters() async throws -> [UInt32] {
        try await control.events(Self.bandID).compactMap { event in
            guard let bytes = event.value, bytes.count >= 6 else { return nil }
            return UInt32(bytes[2]) | UInt32(bytes[3]) << 8 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 24
        }
    }

    /// How many events of `kind` the band's identifier has.
    func bandEvents(_ kind: String) async throws -> Int {
        try await control.events(Self.bandID).filter { $0.kind == kind }.count
    }

    /// Connects and subscribes the band, starts its stream at 20/s and
    /// waits for 10 values.
    func streamBand() async throws {
        try await control.register(Self.bandID)
        try await control.connect(Self.bandID, Self.bandAddress, services: [Self.heartRate])
        try await control.subscribe(Self.bandID, Self.bandAddress, Self.heartRate, Self.measurement)
        try await eventually(timeout: .seconds(30), "the band to connect") { (try? await bandEvents("connected")) == 1 }
        try await bench.startStream("band", rate: 20)
        try await eventually(timeout: .seconds(10), "band values") { ((try? await bandCounters().count) ?? 0) >= 10 }
    }

    /// Stops the band's stream and waits until the last counter it sent is
    /// in the outbox: nothing is in flight after that.
    func waitUntilBandStopped() async throws {
        let reply = try await bench.stopStream("band")
        let last = try #require(reply["counter"]?.intValue.map { UInt32($0) }, "stop_stream: no counter in \(reply)")
        try await eventually(timeout: .seconds(20), "the band's last counter \(last) in the outbox") {
            (try? await self.bandCounters())?.contains(last) == true
        }
    }

    /// With the lock connected and subscribed: makes connects take 4 s to
    /// fail, takes the lock out of range and returns once relinkd's Connect
    /// to it is outstanding.
    func holdLockConnecting() async throws {
        try await bench.send(BenchCommand("set_timing", ["connect_timeout": .number(4)]))
        try await bench.outOfRange("lock")
        try await waitForEvents("disconnected", count: 1)
        try await eventually(timeout: .seconds(30), "relinkd to be connecting") {
            (try? await control.connectionState(Self.id)) == "connecting"
        }
    }
}
