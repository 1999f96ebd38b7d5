import BenchSupport
import DBus
import Foundation
import Testing

/// A lock that needs encryption and rotates its address (issue 24: BlueZoo
/// patch 27, `--lock-privacy`, with patch 22's encrypted state). The
/// program connects it by the resolvable private address it saw, with no
/// match rule; relinkd pairs on demand once, bluetoothd then shows the
/// identity on the same device and relinkd follows it there. After the lock
/// rotates its address (out of range and back, a relinkd SIGKILL meanwhile,
/// a bluetoothd restart) relinkd finds it through the identity bluetoothd
/// resolves, values flow, and it never pairs again. An unbonded rotating
/// lock with no match rule is not found again (the documented limit).
@Suite(.serialized, .timeLimit(.minutes(3))) struct APIPrivacyTests {
    static func bench(encrypted: Bool) -> BenchOptions {
        var options = BenchOptions(peripherals: [.lock()])
        options.encryptedLocks = encrypted
        options.lockPrivacy = true
        return options
    }

    /// The address relinkd's `Status` shows for the identifier's intent.
    static func storedAddress(_ h: Harness) async throws -> String? {
        try await h.control.connections().first?["address"] as? String
    }

    /// The intent's bond as `Status` shows it (store v11): bonded, identity address.
    static func bond(_ h: Harness) async throws -> [Bool?] {
        let entry = try await h.control.connections().first
        return [entry?["bonded"] as? Bool, entry?["identityAddress"] as? Bool]
    }

    /// How many pairings relinkd made, over every relinkd log of the test.
    static func pairings(_ h: Harness) throws -> Int {
        let logs = try FileManager.default.contentsOfDirectory(atPath: h.directory).filter { $0.hasPrefix("relinkd-") && $0.hasSuffix(".log") }
        return try logs.reduce(0) { count, name in
            count + (try String(contentsOfFile: h.directory + "/" + name, encoding: .utf8)).components(separatedBy: "paired and trusted").count - 1
        }
    }

    /// Connects the lock by `rpa` (a random address, as the program saw it
    /// in a scan; its services only: no match rule) and
    /// subscribes to its state; waits until values flow.
    static func connectByRPA(_ h: Harness, _ rpa: String) async throws {
        let client = try await APIClient.connect(h.bench.busAddress)
        defer { client.close() }
        let (central, _, _) = try await client.register(Harness.id)
        _ = try await client.central(central, "Connect", [.string(rpa), APIClient.options([
            "services": .array(.string, [.string(Harness.lockService)]), "address_type": .string("random"),
        ])])
        try await client.central(central, "Subscribe", [.string(rpa), .string(Harness.lockService), .string(Harness.lockState)])
        try await h.waitForEvents("connected", count: 1)
        try await h.waitUntilNotificationsFlow()
    }

    /// What happens to the lock after it was paired: each rotates its address.
    enum Rotation: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case outOfRangeAndBack, relinkdSIGKILLMeanwhile, bluetoothdRestart
        var testDescription: String { rawValue }
    }

    @Test(arguments: Rotation.allCases)
    func theEncryptedRotatingLockIsPairedOnceAndFoundAgainThroughItsIdentity(rotation: Rotation) async throws {
        try await Harness.with(bench: Self.bench(encrypted: true)) { h in
            let rpa = try await h.rotate("lock")
            try await Self.connectByRPA(h, rpa)
            #expect(try Self.pairings(h) == 1, "paired on demand for the refused subscription")
            try await eventually(timeout: .seconds(30), "relinkd to keep the identity") {
                try await Self.storedAddress(h) == Harness.lockAddress
            }
            #expect(try await Self.bond(h) == [true, true], "bonded, at its identity")
            let connectedBefore = try await h.events("connected").count
            switch rotation {
            case .outOfRangeAndBack:
                try await h.bench.outOfRange("lock")
                _ = try await h.rotate("lock")
                try await h.bench.inRange("lock")   // a power-on rotates it once more
            case .relinkdSIGKILLMeanwhile:
                h.killRelinkd()
                try await h.bench.outOfRange("lock")
                _ = try await h.rotate("lock")
                try await h.bench.inRange("lock")
                try await h.startRelinkd()
            case .bluetoothdRestart:
                try await h.bench.restartBlueZ()    // the lock comes back with a new RPA
            }
            if rotation != .relinkdSIGKILLMeanwhile {
                try await h.waitForEvents("connected", count: connectedBefore + 1)
            }
            try await eventually(timeout: .seconds(30), "the lock connected again") { try await h.lockConnectedOnBlueZ(h.deviceObject(showing: Harness.lockAddress)) }
            try await h.waitUntilNotificationsFlow()
            #expect(try await Self.storedAddress(h) == Harness.lockAddress, "still the identity")
            #expect(try await Self.bond(h) == [true, true], "kept per intent (store v11), also across a relinkd restart")
            #expect(try Self.pairings(h) == 1, "never paired again")
        }
    }

    @Test func anUnbondedRotatingLockWithoutAMatchRuleIsNotFoundAgain() async throws {
        try await Harness.with(bench: Self.bench(encrypted: false)) { h in
            let rpa = try await h.rotate("lock")
            try await Self.connectByRPA(h, rpa)
            #expect(try Self.pairings(h) == 0)
            try await h.bench.outOfRange("lock")
            try await h.waitUntilLookingForTheLock()
            try await h.bench.inRange("lock")   // back with a new RPA that nothing resolves
            #expect(try await Self.storedAddress(h) == rpa, "relinkd only knows the old RPA")
            // It keeps looking for the old RPA: no second connection.
            try await h.observeNoMoreEvents("connected", than: 1, for: .seconds(3))
            let state = try await h.control.connectionState(Harness.id)
            #expect(state == "trying-scan" || state == "backing-off" || state == "trying-known-identifier", "\(state ?? "none")")
        }
    }
}
