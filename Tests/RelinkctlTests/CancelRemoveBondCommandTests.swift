import BenchSupport
import Foundation
import Testing

/// `relinkctl cancel --remove-bond` (`Central1.CancelWith`, issue 24): with
/// another identifier on the lock the bond stays and the line says why; the
/// last one's cancel removes it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CancelRemoveBondCommandTests {
    static let id = "org.example.bond"
    static let other = "org.example.bond-other"

    @Test func theLastCancelWithRemoveBondRemovesItAndAnEarlierOneSaysWhyItStays() async throws {
        try await CtlHarness.with { h in
            for id in [Self.id, Self.other] {
                try await h.ok("register", id)
                try await h.ok("connect", id, CtlHarness.lockAddress, "--service", CtlHarness.lockService)
            }
            try await h.waitForEvents(Self.id, kind: "connected")
            try await h.ok("pair", Self.id, CtlHarness.lockAddress)

            let kept = try await h.ok("cancel", Self.id, CtlHarness.lockAddress, "--remove-bond")
            #expect(kept.stdout.contains("\(Self.id): cancelled \(CtlHarness.lockAddress); bond kept: another identifier"), "\(kept)")
            let removed = try await h.ok("--json", "cancel", Self.other, CtlHarness.lockAddress, "--remove-bond")
            let json = try removed.jsonObject()
            #expect(json["bondRemoved"] as? Bool == true && json["reason"] as? String == "", "\(removed)")
            // Peripheral1 follows the device object bluetoothd removed (no scan re-adds it here).
            try await eventually(timeout: .seconds(10), "peripherals no longer shows the bond") {
                (try? await h.ctl("peripherals"))?.stdout.contains("bonded") == false
            }
        }
    }
}
