import BenchSupport
import DBus
import Foundation
import Testing

/// Central1.Read/Write over the link, their typed errors, and the
/// Peripheral1 object's properties.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIGattTests {
    static let command = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"

    func expectError(_ names: Set<String>, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> Void) async {
        do {
            try await call()
            Issue.record("accepted; expected \(names)", sourceLocation: sourceLocation)
        } catch let error as DBusError {
            #expect(names.contains(error.name.rawValue), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func readWriteAndPeripheralProperties() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let lock = DBusValue.string(Harness.lockAddress), service = DBusValue.string(Harness.lockService)
            await expectError(["org.relink.Error.UnknownPeripheral"]) {
                try await client.central(central, "Read", [lock, service, .string(Harness.lockState)])
            }
            let peripheral = try await client.central(central, "Connect", [
                lock, APIClient.options(["services": .array(.string, [service])]),
            ]).decode(ObjectPath.self)
            try await h.waitForEvents("connected", count: 1)

            func read() async throws -> String {
                let bytes = try await client.central(central, "Read", [lock, service, .string(Harness.lockState)]).decode([UInt8].self)
                return String(decoding: bytes, as: UTF8.self)
            }
            #expect(try await read() == "locked")
            try await client.central(central, "Write", [lock, service, .string(Self.command), .array(.byte, Array("unlock".utf8).map { .byte($0) }), APIClient.options()])
            #expect(try await read() == "unlocked")
            try await client.central(central, "Write", [lock, service, .string(Self.command), .array(.byte, Array("lock".utf8).map { .byte($0) }),
                                                         APIClient.options(["with_response": .boolean(false)])])
            try await eventually(timeout: .seconds(5), "a write command to take effect") { (try? await read()) == "locked" }
            // The peripheral refuses: a typed error from BlueZ's answer.
            await expectError(["org.relink.Error.Failed"]) {
                try await client.central(central, "Write", [lock, service, .string(Self.command), .array(.byte, [.byte(0x7A)]), APIClient.options()])
            }
            await expectError(["org.relink.Error.NotSupported", "org.relink.Error.NotPermitted"]) {
                try await client.central(central, "Write", [lock, service, .string(Harness.lockState), .array(.byte, [.byte(1)]), APIClient.options()])
            }
            await expectError(["org.relink.Error.UnknownCharacteristic"]) {
                try await client.central(central, "Read", [lock, service, .string("0000aaaa-0000-1000-8000-00805f9b34fb")])
            }

            // Peripheral1, also addressed by its UUID.
            let props = try await client.call(peripheral, "org.freedesktop.DBus.Properties", "GetAll", [.string("org.relink.Peripheral1")])
                .decode([String: DBusValue].self)
            #expect(props["Address"] == .string(Harness.lockAddress))
            #expect(props["AddressType"] == .string("public"))
            #expect(props["Adapter"] == .string("hci0"))
            #expect(props["Connected"] == .boolean(true))
            guard case .string(let uuid)? = props["Id"] else {
                Issue.record("no Id: \(props)")
                return
            }
            #expect(peripheral.rawValue == "/org/relink/peripheral/" + uuid.lowercased().replacingOccurrences(of: "-", with: "_"))
            #expect(props["Name"] != .string(""), "\(props)")
            guard case .array(_, let services)? = props["Services"] else { return }
            #expect(services.contains(service))
            let byID = try await client.central(central, "Read", [.string(uuid), service, .string(Harness.lockState)]).decode([UInt8].self)
            #expect(String(decoding: byID, as: UTF8.self) == "locked")

            // Cancel ends the link: Connected turns false; reads say NotConnected.
            try await client.central(central, "Cancel", [lock])
            try await eventually(timeout: .seconds(10), "Connected to turn false") {
                (try? await client.call(peripheral, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Peripheral1"), .string("Connected")]).body)
                    == [.variant(.boolean(false))]
            }
            await expectError(["org.relink.Error.NotConnected"]) { _ = try await read() }
        }
    }
}
