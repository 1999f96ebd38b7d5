import BenchSupport
import DBus
import Foundation
import Testing

/// `Central1.Pair` end to end (issue 24, first phase) on the bench: relinkd
/// pairs the lock through its own agent (BlueZoo pairs Just Works with a
/// `NoInputNoOutput` agent only), trusts it, and `Peripheral1` shows the
/// bond; after a relinkd SIGKILL, with the lock gone and back meanwhile,
/// the bond is still there and the link is restored with no second pairing.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIPairingTests {
    /// Peripheral1's `Paired`, `Bonded`, `Trusted`.
    static func bond(_ client: APIClient, _ peripheral: ObjectPath) async throws -> [Bool] {
        let reply = try await client.call(peripheral, "org.freedesktop.DBus.Properties", "GetAll", [.string("org.relink.Peripheral1")])
        let all = try reply.decode([String: DBusValue].self)
        return ["Paired", "Bonded", "Trusted"].map { all[$0] == .variant(.boolean(true)) || all[$0] == .boolean(true) }
    }

    /// bluetoothd's own `Device1` property of the lock (or of the device at `path`).
    static func bluez(_ h: Harness, _ property: String, of path: ObjectPath = Harness.lockPath) async throws -> Bool {
        let reply = try await h.control.connection.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string(property)])
        return reply.body.first == .variant(.boolean(true))
    }

    /// SIGKILLs relinkd; the lock leaves and comes back while relinkd is
    /// away; relinkd starts again and a new client registers, and the
    /// link is restored with notifications flowing. Returns the new client
    /// (the caller closes it) and its `Central1` object.
    static func restartWhileTheLockLeavesAndReturns(_ h: Harness, closing client: APIClient) async throws -> (APIClient, ObjectPath) {
        h.killRelinkd()
        client.close()
        try await h.bench.outOfRange("lock")
        try await eventually(timeout: .seconds(20), "the link dropped") { !(try await h.lockConnectedOnBlueZ()) }
        try await h.bench.inRange("lock")
        try await h.startRelinkd()
        let again = try await APIClient.connect(h.bench.busAddress)
        let (central, _, _) = try await again.register(Harness.id)
        try await eventually(timeout: .seconds(30), "the link restored") { try await h.lockConnectedOnBlueZ() }
        try await h.waitUntilNotificationsFlow()
        return (again, central)
    }

    @Test func theLockPairedOnceStaysBondedAndIsRestoredAfterASIGKILLWithoutPairingAgain() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            let (central, _, _) = try await client.register(Harness.id)
            // Pair needs an intent.
            do {
                try await client.central(central, "Pair", [.string(Harness.lockAddress)])
                Issue.record("Pair without an intent succeeded")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.relink.Error.UnknownPeripheral", "\(error)")
            }
            let peripheral = try await client.central(central, "Connect", [
                .string(Harness.lockAddress), APIClient.options(["services": .array(.string, [.string(Harness.lockService)])]),
            ]).decode(ObjectPath.self)
            try await client.central(central, "Subscribe", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
            try await h.waitForEvents("connected", count: 1)
            #expect(try await Self.bond(client, peripheral) == [false, false, false])

            try await client.central(central, "Pair", [.string(Harness.lockAddress)])
            try await eventually(timeout: .seconds(10), "Peripheral1 shows the bond") { (try? await Self.bond(client, peripheral)) == [true, true, true] }
            let (paired, trusted) = (try await Self.bluez(h, "Paired"), try await Self.bluez(h, "Trusted"))
            #expect(paired && trusted, "BlueZ has it paired and trusted")

            let (again, _) = try await Self.restartWhileTheLockLeavesAndReturns(h, closing: client)
            defer { again.close() }
            try await eventually(timeout: .seconds(10), "Peripheral1 shows the bond after the restart") {
                (try? await Self.bond(again, peripheral)) == [true, true, true]
            }
            #expect(try await Self.bluez(h, "Paired"), "still bonded in BlueZ")
            let log = try String(contentsOfFile: h.directory + "/relinkd-2.log", encoding: .utf8)
            #expect(!log.contains("paired and trusted") && !log.contains("pairing-failed"), "the restarted relinkd did not pair again")
            let first = try String(contentsOfFile: h.directory + "/relinkd-1.log", encoding: .utf8)
            #expect(first.contains("paired and trusted"), "the first relinkd logged its pairing")
        }
    }
}
