import DBus
import Foundation
import RelinkAPI
import RelinkClient
import RelinkModel
import Testing

/// The GATT database's one JSON form, read back by every consumer: the
/// model's round trip, CoreBluetooth's property names, the restored state's
/// `gatt_database` and a `services-changed` event in the client library.
@Suite struct GattDatabaseDecodingTests {
    static let database = GattDatabase(services: [
        GattDatabase.Service(uuid: BluetoothUUID(shortValue: 0x180D), includedServices: [BluetoothUUID(shortValue: 0x180F)], characteristics: [
            GattDatabase.Characteristic(uuid: BluetoothUUID(shortValue: 0x2A37), flags: ["notify", "encrypt-notify"], descriptors: [
                GattDatabase.Descriptor(uuid: GattDatabase.userDescription, flags: ["read"]),
            ]),
            GattDatabase.Characteristic(uuid: BluetoothUUID(shortValue: 0x2A38), flags: ["read", "write-without-response", "reliable-write"]),
        ]),
        GattDatabase.Service(uuid: BluetoothUUID(shortValue: 0x180F), isPrimary: false),
    ], readAt: Date(timeIntervalSince1970: 1_767_225_600.123))

    @Test func theJSONFormRoundTripsAndNamesPropertiesAsCoreBluetoothDoes() throws {
        let json = Self.database.json
        #expect(try GattDatabase(json: json) == Self.database)
        #expect(json.contains(#""readAtMs":1767225600123"#), "\(json)")
        #expect(json.contains(#""properties":["notify","notifyEncryptionRequired"]"#), "\(json)")
        #expect(Self.database.services[0].characteristics[1].properties.names == ["read", "writeWithoutResponse", "extendedProperties"])
        #expect(throws: (any Error).self) { try GattDatabase(json: #"{"services": []}"#) }
    }

    @Test func theRestoredStateCarriesTheDatabaseRelinkdReadLast() throws {
        var restored = try DecodingTests.restored()
        guard case .array(let type, var peripherals)? = restored["peripherals"], case .dictionary(let k, let v, var entries) = peripherals[0] else {
            Issue.record("fixture")
            return
        }
        entries.append(.init(.string("gatt_database"), .variant(.string(Self.database.json))))
        peripherals[0] = .dictionary(key: k, value: v, entries)
        restored["peripherals"] = .array(type, peripherals)
        let state = try RelinkRestoredState(restored)
        #expect(state.peripherals.first?.gattDatabase == Self.database)
        #expect(try RelinkRestoredState(try DecodingTests.restored()).peripherals.first?.gattDatabase == nil, "none read yet")
    }

    @Test func aServicesChangedEventCarriesTheNewDatabase() throws {
        let payload = try RelinkEvent.servicesChanged(peripheral: PeripheralID(UUID()), database: Self.database).encoded()
        let event = RelinkClientEvent(sequence: 3, kind: "services-changed", payloadJSON: String(decoding: payload, as: UTF8.self))
        #expect(event.kind == .servicesChanged)
        #expect(event.gattDatabase == Self.database)
    }
}
