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
        let first = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try await first.apply([.putIdentifier(Fixtures.identifier("keep"))])
        try first.close()
        let second = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? second.close() }
        #expect(try await second.loadState().identifiers.map(\.record.id.rawValue) == ["keep"])
        let queue = try DatabaseQueue(path: second.databasePath)
        #expect(try await queue.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") } == ["v1"])
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
