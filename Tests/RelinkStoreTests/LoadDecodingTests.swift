import Foundation
import GRDB
@testable import RelinkStore
import Testing
import RelinkModel

/// The start-up load decodes rows straight from SQLite's columns, on two
/// readers while a third checks the file: it must be as strict as before
/// (a row the schema should have refused is `corruptRow`, never a crash or
/// a silently wrong record), and the state it preloads must be what a
/// fresh read returns.
@Suite("Start-up load: strict raw decoding, preload")
struct LoadDecodingTests {
    /// A store with one identifier holding a connection intent and a subscription on one peripheral, closed.
    private func populated(_ directory: TemporaryDirectory) async throws -> (RestoreIdentifier, PeripheralRecord) {
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        let id = try Fixtures.id("lock")
        let peripheral = try Fixtures.peripheral(1)
        try await store.apply([
            .putIdentifier(try Fixtures.identifier("lock")), .putPeripheral(peripheral),
            .putScanIntent(id, ScanIntent(services: [try BluetoothUUID(parsing: "180d")], allowDuplicates: false)),
            .putConnectionIntent(try ConnectionIntent(identifier: id, peripheral: peripheral.id, requestedAt: Date())),
            .addSubscription(Subscription(identifier: id, peripheral: peripheral.id, characteristic: CharacteristicKey(service: try BluetoothUUID(parsing: "180d"), characteristic: try BluetoothUUID(parsing: "2a37")))),
        ])
        try store.close()
        return (id, peripheral)
    }

    /// Breaks one value behind the schema's back (CHECKs and foreign keys off).
    private func tamper(_ directory: TemporaryDirectory, _ sql: String) throws {
        var config = Configuration()
        config.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: directory.path + "/" + RelinkStore.databaseFileName, configuration: config)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: sql)
        }
        try queue.close()
    }

    /// Values the schema forbids, per table and column kind.
    static let corruptions: [String] = [
        // UUID BLOBs of the wrong length.
        "UPDATE peripheral SET id = x'0102'",
        "UPDATE connection_intent SET peripheral_id = zeroblob(15)",
        "UPDATE subscription SET peripheral_id = zeroblob(17)",
        "UPDATE subscription SET service_uuid = zeroblob(15)",
        "UPDATE subscription SET characteristic_uuid = x'00'",
        "UPDATE scan_intent SET service_uuids = zeroblob(15)",
        "UPDATE peripheral SET service_uuids = x'0001020304'",
        // Identifier text the rules forbid, in each table.
        "UPDATE restore_identifier SET id = '-starts-with-dash'",
        "UPDATE scan_intent SET identifier = 'has space'",
        "UPDATE connection_intent SET identifier = 'bad/slash'",
        "UPDATE subscription SET identifier = ''",
        // Enum text outside its set.
        "UPDATE restore_identifier SET name_preference = 'loudest'",
        "UPDATE connection_intent SET state = 'flying'",
        "UPDATE connection_intent SET strategies = 'knownIdentifier,teleport'",
        "UPDATE peripheral SET address_type = 'sideways'",
        // Other values the schema forbids.
        "UPDATE peripheral SET address = 'not-an-address'",
        "UPDATE restore_identifier SET owner_uid = -1",
        "UPDATE restore_identifier SET outbox_limit = 0",
        "UPDATE connection_intent SET attempts = -3",
        "UPDATE scan_intent SET allow_duplicates = 2",
        "UPDATE restore_identifier SET dropped_first_seq = 5, dropped_last_seq = 2",
        // (Another storage type than the column's cannot be written: the
        // tables are STRICT. The decoder checks storage types anyway.)
    ]

    /// The table a corruption statement changes.
    static func table(of sql: String) -> String {
        String(sql.split(separator: " ")[1])
    }

    @Test("a value the schema forbids, in any table, is a row kept aside: reported, not loaded, still in the file", arguments: corruptions)
    func badValues(sql: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await populated(directory)
        try tamper(directory, sql)
        let table = Self.table(of: sql)
        let before = try rowCount(directory, table)
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        let state = try await store.loadState()
        try store.close()
        #expect(state.unreadable.contains { $0.table.contains(table) }, "\(sql): \(state.unreadable)")
        #expect(state.unreadable.allSatisfy { !$0.reason.isEmpty })
        if table == "restore_identifier" {
            #expect(state.identifiers.isEmpty, "the identifier whose row is unreadable is not loaded")
        } else if table != "peripheral" {
            #expect(state.identifiers.map(\.record.id.rawValue) == ["lock"], "the identifier itself still loads")
        }
        #expect(try rowCount(directory, table) == before, "the row stays in the file")
    }

    private func rowCount(_ directory: TemporaryDirectory, _ table: String) throws -> Int {
        let queue = try DatabaseQueue(path: directory.path + "/" + RelinkStore.databaseFileName)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
    }

    /// Overwrites the root page of `subscription_by_peripheral` (one page in
    /// this small file): `quick_check` reports it, while the load, which never
    /// reads that index, succeeds. So only the concurrent check can refuse it.
    private func damageIndexPage(_ directory: TemporaryDirectory) async throws {
        let path = directory.path + "/" + RelinkStore.databaseFileName
        let queue = try DatabaseQueue(path: path)
        let (root, pageSize) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'subscription_by_peripheral'") ?? 0,
             try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
        }
        try queue.close()
        #expect(root > 1)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        handle.write(Data((0..<pageSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        try handle.close()
        let damaged = try DatabaseQueue(path: path)
        #expect(try await damaged.read { try String.fetchAll($0, sql: "PRAGMA quick_check(5)") } != ["ok"])
        #expect(try await damaged.read { try StateLoader(db: $0).load() }.identifiers.count == 1, "the load alone does not notice")
        try damaged.close()
    }

    @Test("a file only quick_check finds corrupt is refused under .refuse, untouched, while the load ran beside the check")
    func checkFailureRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await populated(directory)
        try await damageIndexPage(directory)
        let path = directory.path + "/" + RelinkStore.databaseFileName
        let before = FileManager.default.contents(atPath: path)
        let logs = LogCapture()
        #expect {
            _ = try RelinkStore(directory: directory.path, policy: .refuse, logger: logs.logger)
        } throws: { error in
            guard let error = error as? StoreOpenError, case .badState(.corrupt, let at) = error else { return false }
            return at == path && error.exitStatus == 65
        }
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(logs.loud.map(\.level) == [.critical])
    }

    @Test("a file only quick_check finds corrupt is moved aside and what was loaded meanwhile is discarded")
    func checkFailureQuarantinedDiscardsLoad() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await populated(directory)
        try await damageIndexPage(directory)
        let store = try RelinkStore(directory: directory.path, policy: .quarantineAndStartEmpty, logger: LogCapture().logger)
        defer { try? store.close() }
        #expect(store.quarantined.count == 1)
        #expect(try await store.loadState() == StoredState(identifiers: [], peripherals: []))
        let moved = try #require(store.quarantined.first?.quarantinedPath)
        #expect(moved.hasSuffix("-corrupt.sqlite"))
    }

    @Test("the preloaded state equals a fresh read, and a write makes the next load read again")
    func preload() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (id, peripheral) = try await populated(directory)
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        defer { try? store.close() }
        let first = try await store.loadState()
        #expect(first.identifiers.map(\.record.id) == [id])
        #expect(first.identifiers.first?.connections.map(\.peripheral) == [peripheral.id])
        #expect(first.identifiers.first?.subscriptions.count == 1)
        #expect(first.peripherals == [peripheral])
        #expect(try await store.loadState() == first, "a second load reads the file: same state")
        try await store.apply([.removeSubscription(try #require(first.identifiers.first?.subscriptions.first))])
        #expect(try await store.loadState().identifiers.first?.subscriptions == [])
    }
}
