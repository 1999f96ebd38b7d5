import BenchSupport
import DBus
import Foundation
import RelinkModel
import Testing

/// Issue 22 items 1 and 2 end to end: `Central1.GattDatabase` against what
/// the bench lock published, the database in `Register`'s restored state
/// after a SIGKILL of relinkd and after a "reboot", descriptors read and
/// written by UUID over D-Bus, and their typed errors.
@Suite(.serialized, .timeLimit(.minutes(3))) struct APIGattDatabaseTests {
    static let vendor = "8e7f1aff-4b2c-4d1e-9a3f-72656c696e6b"
    static let userDescription = "00002901-0000-1000-8000-00805f9b34fb"
    static let cccd = "00002902-0000-1000-8000-00805f9b34fb"
    static let gap = try? BluetoothUUID(parsing: "1800")

    /// The lock's database as its program published it (bench `get`).
    static func published(_ h: Harness) async throws -> [GattDatabase.Service] {
        let gatt = try #require(try await h.bench.get("lock")["gatt"])
        let json = try JSONEncoder().encode(JSONValue.object(["readAtMs": .number(0), "services": gatt]))
        return try GattDatabase(json: String(decoding: json, as: UTF8.self)).services
    }

    static func database(_ client: APIClient, _ central: ObjectPath) async throws -> GattDatabase {
        try GattDatabase(json: try await client.central(central, "GattDatabase", [.string(Harness.lockAddress)]).decode(String.self))
    }

    /// The lock's database in a `Register` reply's restored state.
    static func restored(_ restored: [String: DBusValue]) throws -> GattDatabase? {
        guard case .array(_, let entries)? = restored["peripherals"]?.unwrapped else { return nil }
        for entry in entries {
            let fields = try entry.unwrapped.decode(as: [String: DBusValue].self)
            if case .string(let json)? = fields["gatt_database"]?.unwrapped { return try GattDatabase(json: json) }
        }
        return nil
    }

    func expectError(_ name: String, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> Void) async {
        do {
            try await call()
            Issue.record("accepted; expected \(name)", sourceLocation: sourceLocation)
        } catch let error as DBusError {
            #expect(error.name.rawValue == name, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func theDatabaseIsWhatTheLockPublishedAndItsDescriptorsAreReadAndWritten() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let lock = DBusValue.string(Harness.lockAddress), service = DBusValue.string(Harness.lockService), state = DBusValue.string(Harness.lockState)
            await expectError("org.relink.Error.UnknownPeripheral") { _ = try await Self.database(client, central) }
            _ = try await client.central(central, "Connect", [lock, APIClient.options(["services": .array(.string, [service])])])
            try await h.waitForEvents("connected", count: 1)
            let database = try await Self.database(client, central)
            // Everything the lock's program published, and bluetoothd's own GAP service besides.
            #expect(database.services.filter { $0.uuid != Self.gap } == (try await Self.published(h)))
            #expect(database.services.contains { $0.uuid == Self.gap })
            let lockService = try #require(database.service(try BluetoothUUID(parsing: Harness.lockService)))
            #expect(lockService.includedServices == [try BluetoothUUID(parsing: "180f")])
            #expect(lockService.characteristic(try BluetoothUUID(parsing: Harness.lockState))?.properties == [.read, .notify])

            let description = try await client.central(central, "ReadDescriptor", [lock, service, state, .string(Self.userDescription)]).decode([UInt8].self)
            #expect(String(decoding: description, as: UTF8.self) == "Lock state")
            try await client.central(central, "WriteDescriptor", [lock, service, state, .string(Self.vendor), .array(.byte, [.byte(0x3C)])])
            let written = try await client.central(central, "ReadDescriptor", [lock, service, state, .string(Self.vendor)]).decode([UInt8].self)
            #expect(written == [0x3C])
            #expect(try await h.bench.get("lock")["descriptor_values"] == .object([
                "\(Harness.lockState)/\(Self.userDescription)": .string(Data("Lock state".utf8).map { String(format: "%02x", $0) }.joined()),
                "\(Harness.lockState)/00002904-0000-1000-8000-00805f9b34fb": .string("19000027010000"),
                "\(Harness.lockState)/\(Self.vendor)": .string("3c"),
            ]), "the lock received the write")

            await expectError("org.relink.Error.NotPermitted") {
                try await client.central(central, "WriteDescriptor", [lock, service, state, .string(Self.cccd), .array(.byte, [.byte(1), .byte(0)])])
            }
            await expectError("org.relink.Error.UnknownDescriptor") {
                try await client.central(central, "ReadDescriptor", [lock, service, state, .string("2908")])
            }
            await expectError("org.relink.Error.UnknownCharacteristic") {
                try await client.central(central, "ReadDescriptor", [lock, .string("fff0"), state, .string(Self.userDescription)])
            }
            await expectError("org.relink.Error.InvalidArguments") {
                try await client.central(central, "ReadDescriptor", [lock, service, state, .string("not-a-uuid")])
            }
            await expectError("org.relink.Error.NotPermitted") {  // the peripheral's answer: a read-only descriptor
                try await client.central(central, "WriteDescriptor", [lock, service, state, .string(Self.userDescription), .array(.byte, [.byte(1)])])
            }
        }
    }

    @Test func theDatabaseIsInTheRestoredStateAfterASIGKILLAndAfterAReboot() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            _ = try await client.central(central, "Connect", [.string(Harness.lockAddress),
                                                               APIClient.options(["services": .array(.string, [.string(Harness.lockService)])])])
            try await h.waitForEvents("connected", count: 1)
            let published = try await Self.published(h)
            var first: GattDatabase?
            try await eventually(timeout: .seconds(10), "the database is kept") {
                first = try Self.restored(try await client.register(Harness.id).restored)
                return first != nil
            }
            #expect(first?.services.filter { $0.uuid != Self.gap } == published)

            h.killRelinkd()
            try await h.startRelinkd()
            let afterKill = try Self.restored(try await client.register(Harness.id).restored)
            #expect(afterKill?.sameLayout(as: try #require(first)) == true, "after SIGKILL: \(String(describing: afterKill))")

            // A reboot: relinkd and bluetoothd go down together, and the lock
            // is away when they come back: the database is the stored one.
            h.killRelinkd()
            let down = Date()
            try await h.bench.outOfRange("lock")
            try await h.bench.restartBlueZ()
            try await h.startRelinkd()
            let afterReboot = try #require(try Self.restored(try await client.register(Harness.id).restored))
            #expect(afterReboot.services.filter { $0.uuid != Self.gap } == published)
            #expect(afterReboot.readAt <= down, "read before the reboot, not after: \(afterReboot.readAt) vs \(down)")
        }
    }
}
