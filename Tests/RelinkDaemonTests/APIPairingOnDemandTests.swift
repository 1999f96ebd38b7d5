import BenchSupport
import DBus
import Foundation
import Testing

/// Pairing on demand end to end (issue 24) on the bench's encrypted lock
/// (`--lock-security encrypted`, BlueZoo patch 22: its state
/// characteristic refuses an unpaired central with BlueZ's NotPermitted
/// "Not paired"). The client never calls `Pair`: relinkd pairs when the
/// subscription and the read are refused, the values flow, and after a
/// relinkd SIGKILL with the lock gone and back meanwhile the link and its
/// notifications are restored over the bond without a second pairing.
/// With `pair_on_demand` off the client gets the refusal and nothing pairs.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIPairingOnDemandTests {
    static var encrypted: BenchOptions {
        var options = BenchOptions()
        options.encryptedLocks = true
        return options
    }

    static func connect(_ client: APIClient, _ central: ObjectPath, pairOnDemand: Bool? = nil) async throws {
        var options: [String: DBusValue] = ["services": .array(.string, [.string(Harness.lockService)])]
        if let pairOnDemand { options["pair_on_demand"] = .boolean(pairOnDemand) }
        _ = try await client.central(central, "Connect", [.string(Harness.lockAddress), APIClient.options(options)])
    }

    static func read(_ client: APIClient, _ central: ObjectPath) async throws -> String {
        let bytes = try await client.central(central, "Read", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
            .decode([UInt8].self)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theEncryptedLockIsPairedOnDemandOnceAndRestoredAfterASIGKILLWithoutPairingAgain() async throws {
        try await Harness.with(bench: Self.encrypted) { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            let (central, _, _) = try await client.register(Harness.id)
            try await Self.connect(client, central)
            try await client.central(central, "Subscribe", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
            try await h.waitForEvents("connected", count: 1)
            try await h.waitUntilNotificationsFlow()
            try await h.bench.push("lock", state: "unlocked")
            #expect(try await Self.read(client, central) == "unlocked", "the read is served over the bond")
            #expect(try await APIPairingTests.bluez(h, "Paired"), "relinkd paired the lock by itself")
            #expect(try await APIPairingTests.bluez(h, "Trusted"))
            let first = try String(contentsOfFile: h.directory + "/relinkd-1.log", encoding: .utf8)
            #expect(first.contains("pairing-on-demand") && first.contains("paired and trusted"))

            let (again, restored) = try await APIPairingTests.restartWhileTheLockLeavesAndReturns(h, closing: client)
            defer { again.close() }
            try await h.bench.push("lock", state: "locked")
            #expect(try await Self.read(again, restored) == "locked")
            let second = try String(contentsOfFile: h.directory + "/relinkd-2.log", encoding: .utf8)
            #expect(!second.contains("pairing-on-demand") && !second.contains("paired and trusted"), "no second pairing")
        }
    }

    /// bluetoothd SIGKILLed and SIGTERMed (and started again), and the
    /// central's adapter power-cycled.
    static let restarts: [BenchCommand] = [
        BenchCommand("restart_bluez", ["signal": .string("KILL")]), BenchCommand("restart_bluez", ["signal": .string("TERM")]),
        BenchCommand("power_cycle_central"),
    ]

    @Test(arguments: Self.restarts)
    func theBondOutlivesBluetoothdRestartsAndAPowerCycleAndTheLockIsNotPairedAgain(restart: BenchCommand) async throws {
        try await Harness.with(bench: Self.encrypted) { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            try await Self.connect(client, central)
            try await client.central(central, "Subscribe", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
            try await h.waitUntilNotificationsFlow()
            #expect(try await APIPairingTests.bluez(h, "Paired"))

            try await h.bench.send(restart)
            // The device object is gone until the new bluetoothd finds the lock again.
            try await eventually(timeout: .seconds(30), "the link restored") { (try? await h.lockConnectedOnBlueZ()) == true }
            try await h.waitUntilNotificationsFlow()
            #expect(try await APIPairingTests.bluez(h, "Paired"), "bluetoothd came back with the bond (patch 23)")
            try await h.bench.push("lock", state: "unlocked")
            #expect(try await Self.read(client, central) == "unlocked")
            let log = try String(contentsOfFile: h.directory + "/relinkd-1.log", encoding: .utf8)
            #expect(log.components(separatedBy: "paired and trusted").count - 1 == 1, "paired once, before the restart")
        }
    }

    @Test func withPairOnDemandOffTheClientGetsTheRefusalAndNothingPairs() async throws {
        try await Harness.with(bench: Self.encrypted) { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            try await Self.connect(client, central, pairOnDemand: false)
            try await h.waitForEvents("connected", count: 1)
            do {
                _ = try await Self.read(client, central)
                Issue.record("read the encrypted state without a bond")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.relink.Error.NotPermitted", "\(error)")
                #expect(error.message.contains("Not paired"), "\(error.message)")
            }
            #expect(try await !APIPairingTests.bluez(h, "Paired"))
        }
    }
}
