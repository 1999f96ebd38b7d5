import BenchSupport
import DBus
import Foundation
import Testing

/// A restore identifier's scan survives a SIGKILL of relinkd.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ScanRestartTests {

    func discoveredAddresses(_ h: Harness) async throws -> [String] {
        try await h.events("discovered").compactMap { event in
            guard let object = try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any],
                  let inner = object["discovered"] as? [String: Any],
                  let advertisement = inner["advertisement"] as? [String: Any],
                  let address = advertisement["address"] as? [String: Any] else { return nil }
            return address["address"] as? String
        }
    }

    /// Watches 2 s that no `discovered` event beyond the first `count`
    /// comes. A real-time wait (Tests/README.md): coalescing means a second
    /// report does not come within a session, and only time shows that.
    func observeNoFurtherDiscovery(_ h: Harness, than count: Int) async throws {
        try await observeQuietly(for: .seconds(2), "no discovered event beyond \(count) (coalesced within a session)") {
            (try? await discoveredAddresses(h).count) == count
        }
    }

    @Test func sigkillWhileScanningResumesTheScan() async throws {
        try await Harness.with { h in
            try await h.control.register(Harness.id)
            try await h.control.call("Scan", [.string(Harness.id), .array(.string, [.string(Harness.heartRate)]), .boolean(false)])
            try await eventually(timeout: .seconds(15), "the band to be discovered") {
                (try? await discoveredAddresses(h).contains(Harness.bandAddress)) == true
            }
            try await observeNoFurtherDiscovery(h, than: 1)
            var addresses = try await discoveredAddresses(h)
            #expect(addresses == [Harness.bandAddress], "coalesced, and only the band offers heart rate")
            h.killRelinkd()
            try await h.startRelinkd()
            let status = try await h.control.status()
            #expect(status["discovering"] as? Bool == true, "the scan is resumed with no client present")
            let ids = status["identifiers"] as? [[String: Any]] ?? []
            #expect(ids.first?["scanning"] as? Bool == true)
            // A new scan session (relinkd started): the band is reported once more, once.
            try await eventually(timeout: .seconds(15), "the band to be discovered by the resumed scan") {
                (try? await discoveredAddresses(h).count) == 2
            }
            try await observeNoFurtherDiscovery(h, than: 2)
            #expect(try await discoveredAddresses(h) == [Harness.bandAddress, Harness.bandAddress], "coalesced within a session")
            // bluetoothd restarts: discovery is resumed, a new session reports the band once.
            try await h.bench.restartBlueZ()
            try await eventually(timeout: .seconds(20), "the band to be discovered after bluetoothd restarted") {
                (try? await discoveredAddresses(h).count) == 3
            }
            try await observeNoFurtherDiscovery(h, than: 3)
            addresses = try await discoveredAddresses(h)
            #expect(addresses == [Harness.bandAddress, Harness.bandAddress, Harness.bandAddress])
            try await h.control.call("StopScan", [.string(Harness.id)])
            #expect(try await h.control.status()["discovering"] as? Bool == false)
        }
    }
}
