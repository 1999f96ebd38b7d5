import Foundation
import GRDB
@testable import RelinkStore
import Testing

@Suite("Schema and migrations")
struct SchemaTests {
    /// Collapses whitespace and drops a trailing semicolon.
    static func normalise(_ sql: String) -> String {
        sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            .trimmingCharacters(in: CharacterSet(charactersIn: "; "))
    }

    @Test("a fresh database built by the migrations equals State/schema.sql")
    func schemaFileMatchesMigrations() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try store.close()

        let queue = try DatabaseQueue(path: directory.path + "/" + RelinkStore.databaseFileName)
        let dumped: [String] = try await queue.read { db in
            let objects = try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'
                """)
            let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1
            return objects + ["PRAGMA user_version = \(version)"]
        }
        let file = try String(contentsOfFile: Fixtures.stateDirectoryOfCheckout + "/schema.sql", encoding: .utf8)
        let withoutComments = file.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }.joined(separator: "\n")
        let expected = withoutComments.split(separator: ";").map { Self.normalise(String($0)) }.filter { !$0.isEmpty }
        #expect(dumped.map(Self.normalise).sorted() == expected.sorted())
        #expect(try await queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test("reopening applies no migration twice and keeps data")
    func reopenIsIdempotent() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let firstLog = LogCapture(), secondLog = LogCapture()
        let first = try RelinkStore(directory: directory.path, logger: firstLog.logger)
        try await first.apply([.putIdentifier(Fixtures.identifier("keep"))])
        try first.close()
        let second = try RelinkStore(directory: directory.path, logger: secondLog.logger)
        let migrated = (firstLog.entries + secondLog.entries).filter { "\($0.message)".contains("migrated") }
        #expect(migrated.isEmpty, "a new store is created, not migrated; a current one is left as it is: \(migrated)")
        defer { try? second.close() }
        #expect(try await second.loadState().identifiers.map(\.record.id.rawValue) == ["keep"])
        let queue = try DatabaseQueue(path: second.databasePath)
        #expect(try await queue.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") } == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13"])
    }

    @Test("a v1 file is migrated to the current schema: its intents keep their values and match by address only")
    func v1FileIsMigrated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/" + RelinkStore.databaseFileName
        do {  // a store as the v1 build left it
            let queue = try DatabaseQueue(path: path)
            var v1 = DatabaseMigrator()
            v1.registerMigration(MigrationV1.identifier) { db in try db.execute(sql: MigrationV1.sql) }
            try v1.migrate(queue)
            try await queue.write { db in
                try db.execute(sql: """
                    INSERT INTO restore_identifier (id, owner_uid, name_preference, outbox_limit, created_at) VALUES ('old', 1000, 'gap', 1000, 1);
                    INSERT INTO peripheral (id, adapter, address, address_type, service_uuids, created_at)
                        VALUES (x'00112233445566778899aabbccddeeff', 'hci0', '00:00:00:00:00:02', 'public', x'', 1);
                    INSERT INTO connection_intent (identifier, peripheral_id, state, strategies, requested_at, attempts)
                        VALUES ('old', x'00112233445566778899aabbccddeeff', 'connected', 'known-identifier,scan', 5, 2);
                    """)
            }
        }
        let log = LogCapture()
        let store = try RelinkStore(directory: directory.path, logger: log.logger)
        defer { try? store.close() }
        #expect(log.entries.contains { $0.level == .notice && "\($0.message)" == "restore store migrated from schema 1 to \(StoreMigrations.latestUserVersion)" },
                "the journal says the store was migrated: \(log.entries.map(\.message))")
        let intents = try await store.loadState().identifiers.flatMap(\.connections)
        let intent = try #require(intents.first)
        #expect(intents.count == 1)
        #expect(intent.state == .connected && intent.strategies == [.knownIdentifier, .scan] && intent.attempts == 2)
        #expect(intent.matchName == nil && intent.matchManufacturerID == nil && intent.matchServices.isEmpty)
        #expect(intent.pairOnDemand && intent.pairingCapability == .noInputNoOutput, "an old intent pairs on demand, Just Works")
        let queue = try DatabaseQueue(path: path)
        #expect(try await queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == StoreMigrations.latestUserVersion)
    }

    @Test("the store's writer connection runs with synchronous=FULL, WAL and foreign keys on")
    func pragmas() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        #expect(try store.writerPragmaForTesting("synchronous") == 2)
        #expect(try store.writerPragmaForTesting("foreign_keys") == 1)
        #expect(FileManager.default.fileExists(atPath: store.databasePath + "-wal"))
    }
}
