import BenchSupport
import Foundation
import RelinkClient
import Synchronization
import Testing

/// `relinkctl pair --capability` against relinkd on the bench (issue 24,
/// pair3): the lock demands numeric comparison (BlueZoo patch 26); with
/// `--reject` the pairing fails, with `--confirm` it pairs, and each prints
/// the request with the passkey shown.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PairRequestCommandTests {
    static let id = "org.example.pairrequest"

    @Test func pairAnswersAConfirmationWithConfirmAndFailsWithReject() async throws {
        try await CtlHarness.with { h in
            try await h.registerAndConnectLock(Self.id)
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

/// The client library's handler (issue 24, pair3): a `RelinkCentral`
/// answers the lock's passkey request through `pair(peripheral:capability:answering:)`,
/// and the request also reaches its `events`.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PairRequestClientTests {
    static let id = "org.example.pairclient"

    @Test func aCentralsHandlerTypesThePasskeyAndTheLockPairs() async throws {
        try await CtlHarness.with { h in
            let (central, _) = try await RelinkCentral.register(restoreIdentifier: Self.id, bus: .address(h.bus))
            defer { Task { await central.close() } }
            _ = try await central.connect(peripheral: CtlHarness.lockAddress, options: .init(services: [CtlHarness.lockService]))
            try await h.waitForEvents(Self.id, kind: "connected")
            try await h.bench.setPairingMethod("lock", "passkey", passkey: 246_810)
            let asked = Mutex<[RelinkPairingRequest]>([])
            try await central.pair(peripheral: CtlHarness.lockAddress, capability: "KeyboardOnly") { request in
                asked.withLock { $0.append(request) }
                return .passkey(246_810)
            }
            #expect(asked.withLock { $0.map(\.kind) } == ["passkey"])
            var events = central.events.makeAsyncIterator()
            while let event = await events.next() {
                if RelinkPairingRequest(event) != nil { break }
            }
            try await eventually(timeout: .seconds(10), "peripherals shows the bond") {
                (try? await h.ctl("peripherals"))?.stdout.contains("paired,bonded,trusted") == true
            }
        }
    }
}
