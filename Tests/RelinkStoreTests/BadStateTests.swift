import Foundation
import GRDB
import Logging
@testable import RelinkStore
import Testing

/// Each bad-state case of State/README.md ("Bad state"), with its exact outcome.
@Suite("Bad state on disk")
struct BadStateTests {
    static let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    private func databasePath(_ directory: TemporaryDirectory) -> String { directory.path + "/" + RelinkStore.databaseFileName }

    private func quarantineFiles(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/quarantine")) ?? []).sorted()
    }

    /// A store with one identifier, closed (so its WAL is checkpointed into the main file).
    private func populatedStore(_ directory: TemporaryDirectory) async throws {
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        var mutations: [StoreMutation] = []
        for n in 0..<300 {
            mutations.append(.putIdentifier(try Fixtures.identifier("id-\(n)")))
            mutations.append(.putPeripheral(try Fixtures.peripheral(n)))
        }
        try await store.apply(mutations)
        try store.close()
    }

    @Test("corrupt file, policy refuse: typed error, file untouched, logged at critical")
    func corruptRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.garbage.write(to: URL(fileURLWithPath: databasePath(directory)))
        let logs = LogCapture()
        #expect {
            _ = try RelinkStore(directory: directory.path, policy: .refuse, logger: logs.logger)
        } throws: { error in
            guard let error = error as? StoreOpenError, case .badState(.corrupt, let path) = error else { return false }
            return path == databasePath(directory) && error.exitStatus == 65
        }
        #expect(FileManager.default.contents(atPath: databasePath(directory)) == Self.garbage)
        #expect(quarantineFiles(directory).isEmpty)
        #expect(logs.loud.count == 1)
        #expect(logs.loud.first?.level == .critical)
        #expect(logs.loud.first?.metadata["RELINK_STORE_PATH"] == "\(databasePath(directory))")
    }

    @Test("corrupt file, policy quarantineAndStartEmpty: file and -wal moved aside with a timestamp, store starts empty")
    func corruptQuarantined() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.garbage.write(to: URL(fileURLWithPath: databasePath(directory)))
        try Data("stray wal".utf8).write(to: URL(fileURLWithPath: databasePath(directory) + "-wal"))
        let logs = LogCapture()
        let store = try RelinkStore(directory: directory.path, policy: .quarantineAndStartEmpty, logger: logs.logger)
        defer { try? store.close() }
        #expect(try await store.loadState() == StoredState(identifiers: [], peripherals: []))
        let moved = try #require(store.quarantined.first)
        #expect(store.quarantined.count == 1)
        #expect(moved.originalPath == databasePath(directory))
        #expect(FileManager.default.contents(atPath: moved.quarantinedPath) == Self.garbage)
        #expect(FileManager.default.contents(atPath: moved.quarantinedPath + "-wal") == Data("stray wal".utf8))
        let name = URL(fileURLWithPath: moved.quarantinedPath).lastPathComponent
        #expect(name.wholeMatch(of: /relink-\d{8}T\d{6}\.\d{3}Z-corrupt\.sqlite/) != nil, "\(name)")
        #expect(quarantineFiles(directory) == [name, name + "-wal"])
        #expect(logs.loud.map(\.level) == [.critical])
        #expect(logs.loud.first?.metadata["RELINK_STORE_QUARANTINE"] == "\(moved.quarantinedPath)")

        // A second bad start never overwrites the first quarantined file.
        try store.close()
        try Self.garbage.write(to: URL(fileURLWithPath: databasePath(directory)))
        let again = try RelinkStore(directory: directory.path, policy: .quarantineAndStartEmpty, logger: logs.logger)
        try again.close()
        #expect(quarantineFiles(directory).filter { $0.hasSuffix(".sqlite") }.count == 2)
    }

    @Test("damaged pages in a real database are found by quick_check and refused")
    func damagedPages() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await populatedStore(directory)
        let handle = try #require(FileHandle(forUpdatingAtPath: databasePath(directory)))
        let size = try handle.seekToEnd()
        #expect(size > 4096 * 6)
        try handle.seek(toOffset: 4096 * 3)
        handle.write(Self.garbage.prefix(4096 * 2))
        try handle.close()
        #expect {
            _ = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        } throws: { error in
            guard let error = error as? StoreOpenError, case .badState(.corrupt, _) = error else { return false }
            return true
        }
    }

    /// Opens under each policy and expects a `StoreOpenError` with
    /// `exitStatus` whose description contains every text of `naming` (and
    /// none of `notNaming`), logged once at critical with the database path.
    private func expectRefusedUnderEveryPolicy(_ directory: TemporaryDirectory, exitStatus: Int32, naming: [String],
                                               notNaming: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        for policy in StoreOpenPolicy.allCases {
            let logs = LogCapture()
            #expect("\(policy)", sourceLocation: sourceLocation) {
                _ = try RelinkStore(directory: directory.path, policy: policy, logger: logs.logger)
            } throws: { error in
                guard let error = error as? StoreOpenError else { return false }
                let text = "\(error)"
                return error.exitStatus == exitStatus && naming.allSatisfy(text.contains) && !notNaming.contains(where: text.contains)
            }
            #expect(logs.loud.map(\.level) == [.critical], "\(policy)", sourceLocation: sourceLocation)
            #expect(logs.loud.first?.metadata["RELINK_STORE_PATH"] == "\(databasePath(directory))", sourceLocation: sourceLocation)
        }
    }

    /// Sets `user_version` (and optionally records a migration this build
    /// does not know) as a newer relink would have.
    private func makeNewer(_ directory: TemporaryDirectory, userVersion: Int, migration: String?) async throws {
        let queue = try DatabaseQueue(path: databasePath(directory))
        try await queue.write { db in
            if let migration { try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration]) }
            try db.execute(sql: "PRAGMA user_version = \(userVersion)")
        }
        try queue.close()
    }

    @Test("a database from a newer schema stops start-up under either policy, naming both versions; never moved aside or migrated",
          arguments: [(StoreMigrations.latestUserVersion + 1, nil), (StoreMigrations.latestUserVersion, "v99-from-the-future")] as [(Int, String?)])
    func newerSchema(userVersion: Int, migration: String?) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await populatedStore(directory)
        try await makeNewer(directory, userVersion: userVersion, migration: migration)
        let before = FileManager.default.contents(atPath: databasePath(directory))
        expectRefusedUnderEveryPolicy(directory, exitStatus: 65,
                                      naming: [databasePath(directory), "schema version \(userVersion)",
                                               "knows up to \(StoreMigrations.latestUserVersion)"] + (migration.map { [$0] } ?? []),
                                      notNaming: [": )"])
        #expect(FileManager.default.contents(atPath: databasePath(directory)) == before)
        #expect(quarantineFiles(directory).isEmpty)
        let old = try DatabaseQueue(path: databasePath(directory))
        #expect(try await old.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM restore_identifier") } == 300)
        try old.close()
    }

    /// What a first start killed before its database bore its name leaves
    /// (SQLite had created `relink.sqlite.new`, not yet written its header):
    /// the next start removes it and makes the database, even under
    /// `.refuse`; before, SQLite made `relink.sqlite` itself, and a kill
    /// there left the empty file refused below (seen once in CrashTests).
    @Test func aCreationCutShortLeavesNoEmptyDatabaseAndIsCleanedUp() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fresh = databasePath(directory) + StoreOpener.creationSuffix
        #expect(FileManager.default.createFile(atPath: fresh, contents: Data()))
        #expect(FileManager.default.createFile(atPath: fresh + "-wal", contents: Data([1, 2, 3])))
        let logs = LogCapture()
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: logs.logger)
        try store.close()
        #expect(logs.loud.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fresh) && !FileManager.default.fileExists(atPath: fresh + "-wal"))
        let header = try #require(FileManager.default.contents(atPath: databasePath(directory))).prefix(16)
        #expect(header == Data("SQLite format 3\u{0}".utf8))
        // And a created database is whole before any store opens it.
        let other = try TemporaryDirectory()
        defer { other.remove() }
        try StoreOpener.createIfMissing(databasePath(other))
        #expect(try #require(FileManager.default.contents(atPath: databasePath(other))).count >= 4096)
        #expect(StoreOpener.headerProblem(databasePath(other)) == nil)
    }

    @Test("a zero-length database file is never taken silently: moved aside as `empty`, logged at critical, refused under .refuse")
    func zeroLengthFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await populatedStore(directory)
        try FileHandle(forUpdatingAtPath: databasePath(directory)).map { try $0.truncate(atOffset: 0); try $0.close() }
        #expect(FileManager.default.contents(atPath: databasePath(directory)) == Data())

        let refusedLogs = LogCapture()
        #expect {
            _ = try RelinkStore(directory: directory.path, policy: .refuse, logger: refusedLogs.logger)
        } throws: { error in
            (error as? StoreOpenError)?.exitStatus == 65 && "\(error)".contains("0 bytes")
        }
        #expect(refusedLogs.loud.map(\.level) == [.critical])
        #expect(FileManager.default.contents(atPath: databasePath(directory)) == Data())

        let logs = LogCapture()
        let store = try RelinkStore(directory: directory.path, policy: .quarantineAndStartEmpty, logger: logs.logger)
        defer { try? store.close() }
        #expect(store.quarantined.map(\.reason.tag) == ["empty"])
        #expect(logs.loud.map(\.level) == [.critical])
        #expect(logs.loud.first?.metadata["RELINK_STORE_PATH"] == "\(databasePath(directory))")
        let moved = try #require(store.quarantined.first?.quarantinedPath)
        #expect(moved.hasSuffix("-empty.sqlite"))
        #expect(FileManager.default.contents(atPath: moved) == Data())
        #expect(try await store.loadState().identifiers.isEmpty)
    }

    @Test("a new state directory makes a new database without a word above info")
    func newDatabaseIsQuiet() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = LogCapture()
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: logs.logger)
        defer { try? store.close() }
        #expect(store.quarantined.isEmpty)
        #expect(logs.entries.filter { $0.level >= .warning }.isEmpty)
    }

    @Test("a directory where the database should be: exit 66 naming the path, cause and fix, logged, left in place")
    func directoryInsteadOfDatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: databasePath(directory), withIntermediateDirectories: false)
        expectRefusedUnderEveryPolicy(directory, exitStatus: 66, naming: [databasePath(directory), "not a regular file"],
                                      notNaming: ["unable to open database file (14)"])
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: databasePath(directory), isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(quarantineFiles(directory).isEmpty)
    }

    @Test("a database another program holds locked: exit 75 naming the path, never moved aside", .timeLimit(.minutes(1)))
    func lockedByAnotherProgram() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await populatedStore(directory)
        // An exclusive-mode connection in WAL mode keeps every other connection out.
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE") }
        let holder = try DatabaseQueue(path: databasePath(directory), configuration: config)
        try await holder.write { db in try db.execute(sql: "UPDATE restore_identifier SET outbox_limit = outbox_limit") }
        expectRefusedUnderEveryPolicy(directory, exitStatus: 75, naming: [databasePath(directory), "locked by another program"])
        try holder.close()
        #expect(quarantineFiles(directory).isEmpty)
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        #expect(try await store.loadState().identifiers.count == 300)
        try store.close()
    }

    @Test("a full disk fails the request with diskFull and stores nothing of it")
    func diskFull() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let id = try Fixtures.id("big")
        try await store.apply([.putIdentifier(Fixtures.identifier("big", limit: 100_000))])
        let before = try await store.loadState()
        try store.capSizeForTesting()
        var mutations: [StoreMutation] = [.putIdentifier(try Fixtures.identifier("second"))]
        for _ in 0..<20 {
            mutations.append(.appendEvent(try OutboxEventDraft(identifier: id, kind: "blob", payload: Data(count: 30_000), createdAt: Fixtures.now)))
        }
        await #expect(throws: StoreError.diskFull) { try await store.apply(mutations) }
        #expect(try await store.loadState() == before)
        #expect(try await store.events(for: id).isEmpty)
        #expect(try await store.integrityCheck() == ["ok"])
    }

    @Test("a read-only database fails the request with readOnly and stores nothing of it")
    func readOnlyAtRuntime() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        try store.setQueryOnlyForTesting(true)
        await #expect(throws: StoreError.readOnly) {
            try await store.apply([.putIdentifier(Fixtures.identifier("a")), .putPeripheral(Fixtures.peripheral(1))])
        }
        try store.setQueryOnlyForTesting(false)
        #expect(try await store.loadState() == StoredState(identifiers: [], peripherals: []))
    }
}
