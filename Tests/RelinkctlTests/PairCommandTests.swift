import BenchSupport
import Foundation
import Testing

/// `relinkctl pair` and the bond in `relinkctl peripherals` against relinkd
/// on the bench (issue 24, first phase): refused without a link, then the
/// lock paired and trusted, shown bonded, and still after a relinkd SIGKILL.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PairCommandTests {
    static let id = "org.example.pair"

    @Test func pairPrintsItAndPeripheralsShowTheBondAcrossARelinkdSIGKILL() async throws {
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            let refused = try await h.ctl("pair", Self.id, CtlHarness.lockAddress)
            #expect(refused.status == 4 && refused.stderr.contains("UnknownPeripheral"), "no intent yet: \(refused)")
            try await h.ok("connect", Self.id, CtlHarness.lockAddress, "--service", CtlHarness.lockService)
            try await h.waitForEvents(Self.id, kind: "connected")
            let before = try await h.ok("peripherals")
            #expect(!before.stdout.contains("bonded"), "\(before)")

            let paired = try await h.ok("pair", Self.id, CtlHarness.lockAddress)
            #expect(paired.stdout.contains("\(Self.id): paired and trusted \(CtlHarness.lockAddress)"), "\(paired)")
            try await eventually(timeout: .seconds(10), "peripherals shows the bond") {
                (try? await h.ctl("peripherals"))?.stdout.contains("connected paired,bonded,trusted") == true
            }
            let json = try await h.ok("--json", "peripherals")
            #expect(json.stdout.contains("\"bonded\":true") || json.stdout.contains("\"bonded\" : true"), "\(json)")

            h.killRelinkd()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(30), "the bond after the restart") {
                (try? await h.ctl("peripherals"))?.stdout.contains("connected paired,bonded,trusted") == true
            }
        }
    }
}
