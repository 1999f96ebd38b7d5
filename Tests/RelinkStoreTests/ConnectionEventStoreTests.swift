import Foundation
import GRDB
@testable import RelinkStore
import Testing
import RelinkModel

/// Connection-event registrations are stored per identifier (migration v13):
/// what they match and which links they were told connected survive a
/// reopen; removing the identifier removes them; a row that no longer reads
/// is kept aside and said so.
@Suite("Connection-event registrations in the store")
struct ConnectionEventStoreTests {
    static func record(_ name: String) throws -> RestoreIdentifierRecord {
        try RestoreIdentifierRecord(id: try Fixtures.id(name), ownerUID: 1000, namePreference: .gap, outboxLimit: 50, createdAt: Fixtures.now)
    }

    @Test func aRegistrationAndItsToldLinksSurviveAReopenAndGoWithTheIdentifier() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let a = try Self.record("org.example.gateway"), b = try Self.record("org.example.other")
        let lock = PeripheralID(), band = PeripheralID()
        let registration = ConnectionEventRegistration(services: [BluetoothUUID(shortValue: 0xFFF0), BluetoothUUID(shortValue: 0x180D)],
                                                       peripherals: [lock, band], told: [band])
        let first = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try await first.apply([.putIdentifier(a), .putIdentifier(b), .putConnectionEvents(a.id, ConnectionEventRegistration(services: [BluetoothUUID(shortValue: 1)])),
                               .putConnectionEvents(a.id, registration), .putConnectionEvents(b.id, ConnectionEventRegistration(peripherals: [lock]))])
        try first.close()
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let loaded = try await store.loadState().identifiers
        #expect(loaded.first { $0.record.id == a.id }?.connectionEvents == registration, "the second put replaced the first")
        #expect(loaded.first { $0.record.id == b.id }?.connectionEvents == ConnectionEventRegistration(peripherals: [lock]))
        try await store.apply([.removeConnectionEvents(b.id), .removeIdentifier(a.id)])
        let after = try await store.loadState()
        #expect(after.identifiers.map(\.record.id) == [b.id])
        #expect(after.identifiers.first?.connectionEvents == nil)
        let rows = try await DatabaseQueue(path: store.databasePath).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM connection_event_registration") }
        #expect(rows == 0, "removed with its identifier")
    }

    @Test func aRegistrationOfAnUnknownIdentifierIsRefusedAndNothingIsApplied() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let a = try Self.record("org.example.gateway")
        await #expect(throws: StoreError.self) {
            try await store.apply([.putIdentifier(a), .putConnectionEvents(try Fixtures.id("org.example.nobody"), ConnectionEventRegistration(peripherals: [PeripheralID()]))])
        }
        #expect(try await store.loadState().identifiers.isEmpty, "all or nothing")
    }

    @Test func aRowThatNoLongerReadsIsKeptAside() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let a = try Self.record("org.example.gateway")
        try await store.apply([.putIdentifier(a), .putConnectionEvents(a.id, ConnectionEventRegistration(services: [BluetoothUUID(shortValue: 0xFFF0)]))])
        try await DatabaseQueue(path: store.databasePath).write { db in
            // Past the table's own check, as a damaged file would be.
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON; UPDATE connection_event_registration SET told_connected = x'00'")
        }
        let state = try await store.loadState()
        #expect(state.identifiers.first?.connectionEvents == nil)
        #expect(state.unreadable.contains { $0.table == "connection_event_registration" })
    }
}
