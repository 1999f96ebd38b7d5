import BenchSupport
import Foundation
import Testing

/// `relinkctl pair --capability` against relinkd on the bench (issue 24,
/// pair3): the lock demands numeric comparison (BlueZoo patch 26); with
/// `--reject` the pairing fails, with `--confirm` it pairs, and each prints
/// the request with the passkey shown.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PairRequestCommandTests {
    static let id = "org.example.pairrequest"

    @Test func pairAnswersAConfirmationWithConfirmAndFailsWithReject() async throws {
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            try await h.ok("connect", Self.id, CtlHarness.lockAddress, "--service", CtlHarness.lockService)
            try await h.waitForEvents(Self.id, kind: "connected")
            try await h.bench.setPairingMethod("lock", "confirmation", passkey: 4321)

            let refused = try await h.ctl("pair", Self.id, CtlHarness.lockAddress, "--capability", "DisplayYesNo", "--reject")
            #expect(refused.status != 0 && refused.stderr.contains("AuthenticationFailed"), "\(refused)")
            #expect(refused.stdout.contains("confirmation 004321"), "the request and its passkey are shown: \(refused)")

            let paired = try await h.ok("pair", Self.id, CtlHarness.lockAddress, "--capability", "DisplayYesNo", "--confirm")
            #expect(paired.stdout.contains("confirmation 004321"), "\(paired)")
            #expect(paired.stdout.contains("\(Self.id): paired and trusted \(CtlHarness.lockAddress)"), "\(paired)")
            try await eventually(timeout: .seconds(10), "peripherals shows the bond") {
                (try? await h.ctl("peripherals"))?.stdout.contains("paired,bonded,trusted") == true
            }
        }
    }
}
