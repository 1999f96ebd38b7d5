import BenchSupport
import Foundation
import Testing

/// The band streaming (a u32 counter in every value) while relinkd holds it
/// connected and subscribed, and then the link is lost under relinkd's feet:
/// bluetoothd killed and restarted, or the central adapter power-cycled.
/// relinkd reconnects and re-subscribes by itself; counters flow again and
/// no counter value is ever delivered twice (a doubled subscription would
/// deliver each value twice; a missing one would deliver nothing).
@Suite(.serialized, .timeLimit(.minutes(2))) struct BandLinkLossTests {
    /// After the link loss: one disconnect, one reconnect, values flowing
    /// again (counters beyond the last one seen before), never doubled.
    func expectStreamResumed(_ h: Harness, lastBefore: UInt32, _ what: String) async throws {
        let lost = ContinuousClock.now
        try await eventually(timeout: .seconds(30), "the band's disconnected event") { (try? await h.bandEvents("disconnected")) == 1 }
        try await eventually(timeout: .seconds(60), "the band to reconnect") { (try? await h.bandEvents("connected")) == 2 }
        let atReconnect = try await h.bandCounters().count
        print("figure: band \(what) to reconnected: \(ContinuousClock.now - lost)")
        try await eventually(timeout: .seconds(15), "10 new band values after the reconnect") {
            ((try? await h.bandCounters().count) ?? 0) >= atReconnect + 10
        }
        try await h.waitUntilBandStopped()
        let values = try await h.bandCounters()
        let kinds = try await h.control.events(Harness.bandID).map(\.kind).filter { $0 != "value-notified" }
        print("band \(what): events \(kinds), \(values.count) counters, last before \(lastBefore): \(values)")
        #expect(values.contains { $0 > lastBefore }, "no counter after the link loss: \(values)")
        #expect(Set(values).count == values.count, "a band counter was delivered twice: \(values)")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "band counters doubled or reordered: \(values)")
        #expect(try await h.bandEvents("connected") == 2, "exactly one reconnection")
        #expect(try await h.control.connectionState(Harness.bandID) == "connected")
    }

    @Test func bluetoothdRestartWhileStreamingReconnectsAndResubscribesOnce() async throws {
        try await Harness.with { h in
            try await h.streamBand()
            let lastBefore = try await h.bandCounters().last ?? 0
            try await h.bench.restartBlueZ()
            try await expectStreamResumed(h, lastBefore: lastBefore, "bluetoothd restart")
        }
    }

    @Test func adapterPowerCycleWhileStreamingReconnectsAndResubscribesOnce() async throws {
        try await Harness.with { h in
            try await h.streamBand()
            let lastBefore = try await h.bandCounters().last ?? 0
            try await h.bench.powerCycleCentral(offSeconds: 0.5)
            try await expectStreamResumed(h, lastBefore: lastBefore, "adapter power cycle")
        }
    }

    /// relinkd SIGKILLed and bluetoothd restarted while it is down: the
    /// stored link is gone; the new relinkd reconnects and re-subscribes,
    /// reports the band `restored` once, and the stream is never doubled.
    @Test func bluetoothdRestartWhileRelinkdIsDownRestoresTheStream() async throws {
        try await Harness.with { h in
            try await h.streamBand()
            let lastBefore = try await h.bandCounters().last ?? 0
            h.killRelinkd()
            try await h.bench.restartBlueZ()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(60), "the band to be restored") { (try? await h.bandEvents("restored")) == 1 }
            let atRestore = try await h.bandCounters().count
            try await eventually(timeout: .seconds(15), "10 new band values after the restore") {
                ((try? await h.bandCounters().count) ?? 0) >= atRestore + 10
            }
            try await h.waitUntilBandStopped()
            let values = try await h.bandCounters()
            #expect(values.contains { $0 > lastBefore })
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "band counters doubled or reordered: \(values)")
            #expect(try await h.bandEvents("restored") == 1)
            #expect(try await h.bandEvents("connected") == 1, "only the first connection, before the restart")
        }
    }
}
