import Foundation
@testable import RelinkStore
import Testing
import RelinkModel

@Suite("GATT database rows")
struct GattDatabaseStoreTests {
    static func database(readAt: Date, extra: Bool = false) throws -> GattDatabase {
        var characteristics = [GattDatabase.Characteristic(uuid: try BluetoothUUID(parsing: "2a37"), flags: ["notify"], descriptors: [
            GattDatabase.Descriptor(uuid: GattDatabase.userDescription, flags: ["read"]),
            GattDatabase.Descriptor(uuid: try BluetoothUUID(parsing: "8e7f1aff-4b2c-4d1e-9a3f-72656c696e6b"), flags: ["read", "write"]),
        ])]
        if extra { characteristics.append(GattDatabase.Characteristic(uuid: try BluetoothUUID(parsing: "2a39"), flags: ["write"])) }
        return GattDatabase(services: [
            GattDatabase.Service(uuid: try BluetoothUUID(parsing: "180d"), includedServices: [try BluetoothUUID(parsing: "180f")], characteristics: characteristics),
            GattDatabase.Service(uuid: try BluetoothUUID(parsing: "180f"), isPrimary: false),
        ], readAt: readAt)
    }

    @Test("the last database per peripheral reads back with when it was read, replaced by the next, gone with its peripheral, also after reopening")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try DeviceAddress(adapter: "hci0", address: "00:00:00:00:00:02", addressType: "public")
        let peripheral = try PeripheralRecord(id: PeripheralID(), address: address, serviceUUIDs: [], createdAt: Fixtures.now)
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try await store.apply([.putPeripheral(peripheral), .putGattDatabase(peripheral.id, try Self.database(readAt: Fixtures.now))])
        let newer = try Self.database(readAt: Fixtures.now.addingTimeInterval(60), extra: true)
        try await store.apply([.putGattDatabase(peripheral.id, newer)])
        #expect(try await store.loadState().gattDatabases == [peripheral.id: newer])
        try store.close()
        let reopened = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? reopened.close() }
        #expect(try await reopened.loadState().gattDatabases == [peripheral.id: newer])
        try await reopened.apply([.removePeripheral(peripheral.id)])
        #expect(try await reopened.loadState().gattDatabases.isEmpty)
    }

    @Test("a database for a peripheral the store does not know is refused")
    func unknownPeripheral() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        await #expect(throws: (any Error).self) { try await store.apply([.putGattDatabase(PeripheralID(), try Self.database(readAt: Fixtures.now))]) }
    }
}
