import Foundation
import GRDB
import Logging
import RelinkModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Opens (creating or migrating) the database in a state directory and
/// applies the bad-state policy. See `State/README.md`, "Bad state".
struct StoreOpener {
    let directory: String
    let policy: StoreOpenPolicy
    let logger: Logger

    var databasePath: String { directory + "/" + RelinkStore.databaseFileName }

    /// What an open produced: the pool, files moved aside, and the whole
    /// state when it was loaded while the file was checked (nil: not loaded).
    struct Opened {
        /// Held until the store is closed.
        var lock: StateDirectoryLock
        var pool: DatabasePool
        var quarantined: [QuarantinedFile]
        var preloaded: Result<StoredState, StoreError>?
    }

    /// Opens the database; every failure is logged at critical (path, cause
    /// and fix in the message) before it is thrown.
    func open() throws(StoreOpenError) -> Opened {
        do {
            return try openOnce()
        } catch {
            logger.critical("restore store: \(error)", metadata: .journal([
                .storePath: "\(error.path)", .error: "\(error.problem)", .storePolicy: "\(policy.rawValue)",
                .exitStatus: "\(error.exitStatus)",
            ]))
            throw error
        }
    }

    private func openOnce() throws(StoreOpenError) -> Opened {
        try prepareDirectory()
        // Before the database is looked at; released on any throw below (deinit).
        let lock = try StateDirectoryLock.acquire(directory: directory)
        var quarantined: [QuarantinedFile] = []
        // At most two rounds: the file found, then (after moving it aside) a fresh one.
        for _ in 0..<2 {
            switch attempt() {
            case .success(let (pool, preloaded)):
                return Opened(lock: lock, pool: pool, quarantined: quarantined, preloaded: preloaded)
            case .failure(.storage(let error)):
                throw .storage(error, path: databasePath)
            case .failure(.unavailable(let path, let cause)):
                throw .fileUnavailable(path: path, cause: cause)
            case .failure(.newerSchema(let found, let unknown)):
                throw .newerSchema(path: databasePath, found: found, supported: StoreMigrations.latestUserVersion,
                                   unknownMigrations: unknown)
            case .failure(.bad(let reason)):
                quarantined.append(try handleBadState(reason))
            }
        }
        throw .storage(.io("a freshly created database was unusable too: see the log"), path: databasePath)
    }

    private enum Failure: Error {
        case bad(BadStateReason)
        case unavailable(path: String, FileUnavailableCause)
        case newerSchema(userVersion: Int, unknownMigrations: [String])
        case storage(StoreError)
    }

    private func prepareDirectory() throws(StoreOpenError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw unusable("cannot create: \(error.localizedDescription)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw unusable("not a directory")
        }
        guard access(directory, R_OK | W_OK | X_OK) == 0 else {
            throw unusable("no read/write access: \(String(cString: strerror(errno)))")
        }
    }

    private func unusable(_ reason: String) -> StoreOpenError {
        .stateDirectoryUnusable(path: directory, reason: reason)
    }

    private func attempt() -> Result<(DatabasePool, Result<StoredState, StoreError>?), Failure> {
        if let (path, cause) = Self.accessProblem(databasePath) { return .failure(.unavailable(path: path, cause)) }
        do { try Self.createIfMissing(databasePath) } catch { return .failure(classify(error)) }
        if let reason = Self.headerProblem(databasePath) { return .failure(.bad(reason)) }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: databasePath, configuration: Self.configuration)
            // GRDB sets synchronous=NORMAL on the writer after `prepareDatabase`
            // when it enables WAL; the writer connection lives as long as the
            // pool, so setting FULL here holds for every write.
            try pool.barrierWriteWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        } catch {
            return .failure(classify(error))
        }
        do {
            let (problem, current) = try pool.read { db in
                (try Self.schemaProblem(db), try StoreMigrations.migrator.hasCompletedMigrations(db))
            }
            if let newer = problem {
                try? pool.close()
                return .failure(newer)
            }
            guard current else {
                // A new or older database: checked whole before it is migrated.
                if let reason = try pool.read(Self.integrityProblem) {
                    try? pool.close()
                    return .failure(.bad(reason))
                }
                let from = try pool.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
                try StoreMigrations.migrator.migrate(pool)
                // An operator upgrading relink sees the store follow (a new
                // database is schema 0 before its first migration).
                if from > 0 {
                    logger.notice("restore store migrated from schema \(from) to \(StoreMigrations.latestUserVersion)",
                                  metadata: .journal([.storePath: "\(databasePath)"]))
                }
                return .success((pool, nil))
            }
            // The usual start: the whole-file check and the load of the state
            // run at once on separate readers (nothing writes meanwhile: the
            // store is not handed out yet); a bad check discards the load.
            let (integrity, preloaded) = Self.checkAndLoad(pool)
            if let reason = try integrity.get() {
                try? pool.close()
                return .failure(.bad(reason))
            }
            return .success((pool, preloaded))
        } catch {
            try? pool.close()
            return .failure(classify(error))
        }
    }

    /// `quick_check`, the identifiers and the peripherals, on three readers at once.
    static func checkAndLoad(_ pool: DatabasePool) -> (Result<BadStateReason?, any Error>, Result<StoredState, StoreError>) {
        let integrity = Mutex<Result<BadStateReason?, any Error>>(.success(nil))
        let identifiers = Mutex<Result<([StoredState.Identifier], [UnreadableRow], [RestoreIdentifier: PeripheralManagerRecord], [TransferRecord]),
                                       StoreError>>(.success(([], [], [:], [])))
        let peripherals = Mutex<Result<([PeripheralRecord], [UnreadableRow], [String: AdapterStatus], [PeripheralID: GattDatabase]), StoreError>>(
            .success(([], [], [:], [:])))
        DispatchQueue.concurrentPerform(iterations: 3) { part in
            switch part {
            case 0:
                let result = Result { try pool.read(Self.integrityProblem) }
                integrity.withLock { $0 = result }
            case 1:
                let result = Result { try pool.read { db in
                    let loader = StateLoader(db: db)
                    let (ids, unreadable) = try loader.identifiers()
                    let (managers, unreadableManagers) = try loader.peripheralManagers()
                    let (transfers, unreadableTransfers) = try loader.transfers()
                    return (ids, unreadable + unreadableManagers + unreadableTransfers, managers, transfers)
                } }.mapError(StoreError.from)
                identifiers.withLock { $0 = result }
            default:
                let result = Result { try pool.read { db in
                    let loader = StateLoader(db: db)
                    let (rows, unreadable) = try loader.peripherals()
                    let (adapters, unreadableAdapters) = try loader.adapterStates()
                    let (databases, unreadableDatabases) = try loader.gattDatabases()
                    return (rows, unreadable + unreadableAdapters + unreadableDatabases, adapters, databases)
                } }.mapError(StoreError.from)
                peripherals.withLock { $0 = result }
            }
        }
        let loaded: Result<StoredState, StoreError>
        switch (identifiers.withLock { $0 }, peripherals.withLock { $0 }) {
        case (.success(let ids), .success(let rows)):
            var state = StoredState(identifiers: ids.0, peripherals: rows.0, unreadable: ids.1 + rows.1, adapterStates: rows.2,
                                    gattDatabases: rows.3)
            state.peripheralManagers = ids.2
            state.transfers = ids.3
            loaded = .success(state)
        case (.failure(let error), _), (_, .failure(let error)): loaded = .failure(error)
        }
        return (integrity.withLock { $0 }, loaded)
    }

    /// Sorts an error from opening, checking or migrating: proven damage
    /// (the only thing ever moved aside), a file that cannot be used as it
    /// is (left in place), or a storage failure.
    private func classify(_ error: any Error) -> Failure {
        if let error = error as? DatabaseError {
            let message = "\(error.message ?? "\(error.resultCode)") (\(error.extendedResultCode))"
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED: return .unavailable(path: databasePath, .busy(message))
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH: return .unavailable(path: databasePath, .cannotOpen(message))
            default: break
            }
        }
        switch StoreError.from(error) {
        case .corrupt(let why): return .bad(.corrupt(why))
        case let other: return .storage(other)
        }
    }

    /// A file of the database (main, `-wal`, `-shm`) that exists but is not
    /// a regular file or that this process may not read and write; nil when
    /// all that exist are usable. Checked before SQLite opens anything:
    /// SQLite would only say "unable to open database file".
    static func accessProblem(_ databasePath: String) -> (String, FileUnavailableCause)? {
        for file in [databasePath, databasePath + "-wal", databasePath + "-shm"] {
            var info = stat()
            guard stat(file, &info) == 0 else {
                let code = errno
                if code == ENOENT { continue }
                return (file, .cannotOpen(String(cString: strerror(code))))
            }
            guard info.st_mode & S_IFMT == S_IFREG else { return (file, .notARegularFile) }
            if access(file, R_OK | W_OK) != 0 {
                let code = errno, why = String(cString: strerror(code))
                return (file, code == EACCES || code == EPERM ? .permissionDenied(why) : .cannotOpen(why))
            }
        }
        return nil
    }

    /// The suffix of the name a new database is made under before it takes
    /// its own name.
    static let creationSuffix = ".new"

    /// Makes a missing database whole before it bears its name: an empty
    /// WAL-mode database (its 4 KiB header page written and fsynced) under
    /// `path` + ``creationSuffix``, then renamed to `path` and the directory
    /// fsynced. A relinkd killed during its first start thus leaves either
    /// no database or a valid empty one, never the empty file that
    /// ``BadStateReason/empty`` refuses (SQLite creates the file before it
    /// writes its header); a leftover of a creation cut short held nothing
    /// and is removed.
    static func createIfMissing(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 { return }
        let fresh = path + creationSuffix
        for file in [fresh, fresh + "-wal", fresh + "-shm"] { unlink(file) }
        let queue = try DatabaseQueue(path: fresh)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try queue.close()
        guard DurableFile.sync(fresh, flags: O_RDWR) else { throw StoreError.io("cannot sync \(fresh): \(String(cString: strerror(errno)))") }
        guard rename(fresh, path) == 0 else { throw StoreError.io("cannot rename \(fresh) to \(path): \(String(cString: strerror(errno)))") }
        let directory = (path as NSString).deletingLastPathComponent
        _ = DurableFile.syncDirectory(directory.isEmpty ? "." : directory)  // best effort, as before: the name is already there
    }

    /// Checks the 16-byte SQLite header before SQLite touches the file: on a
    /// file that is not a database, SQLite could still delete its `-wal` on
    /// close, and that WAL must go to quarantine with it. An existing empty
    /// file is `.empty` (SQLite would take it as a new database, in silence);
    /// a missing one is a new database.
    static func headerProblem(_ path: String) -> BadStateReason? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let header: Data
        do {
            header = try handle.read(upToCount: 16) ?? Data()
        } catch {
            return nil  // a read error is no proof of anything: SQLite meets it too and reports it
        }
        if header.isEmpty { return .empty }
        if header == Data("SQLite format 3\u{0}".utf8) { return nil }
        return .corrupt("not an SQLite database: bad file header")
    }

    /// SQLite's check of the whole file (`quick_check`: every page and
    /// record, without comparing indexes to tables), or nil when sound.
    static func integrityProblem(_ db: Database) throws -> BadStateReason? {
        let check = try String.fetchAll(db, sql: "PRAGMA quick_check(5)")
        return check == ["ok"] ? nil : .corrupt(check.joined(separator: "; "))
    }

    /// A schema from a newer relink (`Failure.newerSchema`), or nil.
    private static func schemaProblem(_ db: Database) throws -> Failure? {
        let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        var unknown: [String] = []
        if try db.tableExists("grdb_migrations") {
            let known = Set(StoreMigrations.migrator.migrations)
            unknown = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").filter { !known.contains($0) }
        }
        if userVersion > StoreMigrations.latestUserVersion || !unknown.isEmpty {
            return .newerSchema(userVersion: userVersion, unknownMigrations: unknown)
        }
        return nil
    }

    /// Moves the database aside under `.quarantineAndStartEmpty` (logged at
    /// critical); throws `.badState` under `.refuse`.
    private func handleBadState(_ reason: BadStateReason) throws(StoreOpenError) -> QuarantinedFile {
        guard policy == .quarantineAndStartEmpty else { throw .badState(reason, path: databasePath) }
        let target: String, now = Date()
        do {
            target = try Quarantine(directory: directory).moveAside(databasePath, reason: reason, now: now)
        } catch {
            throw .quarantineFailed(reason, path: databasePath, error: error.localizedDescription)
        }
        logger.critical("restore store: \(databasePath): \(reason); moved aside to \(target), starting with an EMPTY store", metadata: .journal([
            .storePath: "\(databasePath)", .error: "\(reason)", .storePolicy: "\(policy.rawValue)",
            .storeQuarantine: "\(target)",
        ]))
        return QuarantinedFile(reason: reason, originalPath: databasePath, quarantinedPath: target, quarantinedAt: now)
    }

    /// WAL (set by `DatabasePool`), `synchronous=FULL` (the WAL is fsynced at
    /// every commit, so a commit that returned survives power loss; NORMAL
    /// would only survive process crashes), foreign keys on.
    static var configuration: Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(5)
        config.label = "relink-store"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Read pages through mmap instead of pread copies (faster start-up load).
            try db.execute(sql: "PRAGMA mmap_size = 268435456")
        }
        return config
    }
}
