import Foundation
import GRDB
@testable import RelinkStore
import Testing
import RelinkModel

/// Advertising-data prefixes are part of the stored intent (migration v5):
/// a scan's filter and a match rule's prefixes survive a restart.
@Suite("Data prefixes in the store")
struct DataPrefixStoreTests {
    static func prefixes() throws -> Set<AdvertisingDataPrefix> {
        [try AdvertisingDataPrefix(parsing: "manufacturer:0x004c:0215"), try AdvertisingDataPrefix(parsing: "manufacturer:0xffff:524c/f0ff"),
         try AdvertisingDataPrefix(parsing: "service:feaa:"), try AdvertisingDataPrefix(parsing: "service:8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b:01")]
    }

    @Test func aScanAndAMatchRuleKeepTheirPrefixesAcrossAReopen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let id = try Fixtures.id("org.example.beacons")
        let record = try RestoreIdentifierRecord(id: id, ownerUID: 1000, namePreference: .gap, outboxLimit: 50, createdAt: Fixtures.now)
        let peripheral = try PeripheralRecord(id: PeripheralID(), address: DeviceAddress(adapter: "hci0", address: "00:00:00:00:00:0A", addressType: "public"),
                                              serviceUUIDs: [], createdAt: Fixtures.now)
        let scan = ScanIntent(allowDuplicates: true, dataPrefixes: try Self.prefixes())
        let intent = try ConnectionIntent(identifier: id, peripheral: peripheral.id, requestedAt: Fixtures.now,
                                          matchDataPrefixes: try Self.prefixes().sorted())
        let first = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try await first.apply([.putIdentifier(record), .putPeripheral(peripheral), .putScanIntent(id, scan), .putConnectionIntent(intent)])
        try first.close()
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let loaded = try #require(try await store.loadState().identifiers.first)
        #expect(loaded.scan == scan)
        #expect(loaded.connections == [intent])
    }

    @Test func aV3FileGetsEmptyPrefixes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/" + RelinkStore.databaseFileName
        do {
            let queue = try DatabaseQueue(path: path)
            var old = DatabaseMigrator()
            old.registerMigration(MigrationV1.identifier) { db in try db.execute(sql: MigrationV1.sql) }
            old.registerMigration(MigrationV2.identifier) { db in try db.execute(sql: MigrationV2.sql) }
            old.registerMigration(MigrationV3.identifier) { db in try db.execute(sql: MigrationV3.sql) }
            try old.migrate(queue)
            try await queue.write { db in
                try db.execute(sql: """
                    INSERT INTO restore_identifier (id, owner_uid, name_preference, outbox_limit, created_at) VALUES ('old', 1000, 'gap', 1000, 1);
                    INSERT INTO scan_intent (identifier, service_uuids, allow_duplicates, updated_at) VALUES ('old', x'', 1, 1);
                    """)
            }
        }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let loaded = try #require(try await store.loadState().identifiers.first)
        #expect(loaded.scan == ScanIntent(allowDuplicates: true))
    }

    @Test func aPrefixThatNoLongerParsesMakesItsRowUnreadable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let id = try Fixtures.id("org.example.bad")
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        try await store.apply([.putIdentifier(try RestoreIdentifierRecord(id: id, ownerUID: 1, namePreference: .gap, outboxLimit: 5, createdAt: Fixtures.now)),
                               .putScanIntent(id, ScanIntent())])
        let queue = try DatabaseQueue(path: store.databasePath)
        try await queue.write { try $0.execute(sql: "UPDATE scan_intent SET data_prefixes = 'manufacturer:zz:00'") }
        let state = try await store.loadState()
        #expect(state.identifiers.first?.scan == nil)
        #expect(state.unreadable.contains { $0.table == "scan_intent" })
    }
}
