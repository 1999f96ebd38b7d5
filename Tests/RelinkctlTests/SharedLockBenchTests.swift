import BenchSupport
import Foundation
import Testing

/// Issue 21, items 8 and 9, as a new user met them on the bench: two
/// programs on one lock, and a typo in a characteristic UUID.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SharedLockBenchTests {
    typealias H = CtlHarness
    static let typo = "8e7f1a09-4b2c-4d1e-9a3f-72656c696e6b"

    /// The `state` of `identifier`'s only connection in `relinkctl status --json`.
    static func state(_ h: H, _ identifier: String) async throws -> String? {
        let status = try await h.ok("--json", "status").jsonObject()
        let ids = status["identifiers"] as? [[String: Any]] ?? []
        let connections = ids.first { $0["id"] as? String == identifier }?["connections"] as? [[String: Any]]
        return connections?.first?["state"] as? String
    }

    /// `owner` holds the lock; `second` connects to it while it is up.
    static func shared(_ h: H) async throws {
        try await h.ok("register", "owner")
        try await h.ok("connect", "owner", H.lockAddress, "--service", H.lockService)
        try await h.waitForEvents("owner", kind: "connected")
        try await h.ok("subscribe", "owner", H.lockAddress, H.lockService, H.lockState)
        try await h.ok("register", "second")
        try await h.ok("connect", "second", H.lockAddress, "--service", H.lockService)
    }

    @Test func aSecondProgramOnAConnectedLockHearsConnectedAndRestored() async throws {
        try await H.with { h in
            try await Self.shared(h)
            try await h.waitForEvents("second", kind: "connected", timeout: .seconds(10))
            #expect(try await Self.state(h, "second") == "connected-shared")
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("owner", kind: "restored")
            try await h.waitForEvents("second", kind: "restored", timeout: .seconds(10))
            #expect(try await Self.state(h, "second") == "connected-shared")
        }
    }

    @Test func aTypoInACharacteristicIsRefusedAndTheLockIsLeftAlone() async throws {
        try await H.with { h in
            try await Self.shared(h)
            try await h.waitForEvents("second", kind: "connected", timeout: .seconds(10))
            let refused = try await h.ctl("subscribe", "second", H.lockAddress, H.lockService, Self.typo)
            #expect(refused.status == 4, "\(refused)")
            #expect(refused.stderr.contains("org.relink.Error.UnknownCharacteristic"), "\(refused)")
            let read = try await h.ctl("read", "second", H.lockAddress, H.lockService, Self.typo)
            #expect(read.status == 4 && read.stderr.contains("org.relink.Error.UnknownCharacteristic"), "\(read)")
            let restored = try await h.ok("--json", "register", "second").jsonObject()
            let subscriptions = (restored["peripherals"] as? [[String: Any]])?.first?["subscriptions"] as? [Any]
            #expect(subscriptions?.isEmpty == true, "nothing stored: \(restored)")
            // The good subscription of the other program still delivers.
            let probe = h.prober(7)
            defer { probe.cancel() }
            try await eventually(timeout: .seconds(20), "a lock value for the owner") {
                try await h.events("owner").contains { ($0["kind"] as? String) == "value-notified" }
            }
            let kinds = try await h.events("second").compactMap { $0["kind"] as? String }
            #expect(!kinds.contains("disconnected"), "\(kinds)")
        }
    }
}
