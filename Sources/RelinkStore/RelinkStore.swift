import Foundation
import GRDB
public import Logging
import Synchronization
public import RelinkModel

/// The restore store: everything clients asked for, per restore identifier,
/// in one SQLite database (WAL, `synchronous=FULL`) in the state directory.
///
/// Every write method returns only after its transaction has committed and
/// been fsynced; concurrent writes share commits (group commit). Reads run
/// concurrently with writes and see the last committed state.
public final class RelinkStore: Sendable {
    /// The database file's name inside the state directory.
    public static let databaseFileName = "relink.sqlite"

    /// Full path of the database file.
    public let databasePath: String
    /// Databases moved aside while opening (policy `.quarantineAndStartEmpty`);
    /// non-empty means this store started EMPTY and the daemon should say so.
    public let quarantined: [QuarantinedFile]

    /// Whether the previous writer closed the store with
    /// `close(markingCleanStop: true)`: every write it made had committed.
    /// False after a crash, and for a new or quarantined database.
    public let openedAfterCleanStop: Bool

    let pool: DatabasePool
    /// The state directory's lock (`relink.lock`), released by `close()` or at deinit.
    private let lock: StateDirectoryLock
    private let committer: GroupCommitter
    private let marker: CleanStopMarker
    /// The state as loaded while the file was checked at open; used by the
    /// first `loadState()` unless something was written since.
    private let preloaded: Mutex<Result<StoredState, StoreError>?>

    /// Opens the store in `directory` (created with mode 0700 if missing),
    /// creating or migrating the database.
    ///
    /// Holds the state directory's lock (`relink.lock`) until ``close(markingCleanStop:)``
    /// (or until the store is released): one store per state directory.
    ///
    /// - Throws: `StoreOpenError.stateDirectoryUnusable` when the directory
    ///   cannot be created, read or written; `.stateDirectoryInUse` when
    ///   another process (another relinkd) holds it; `.fileUnavailable` when the
    ///   database, its `-wal` or `-shm` cannot be read and written, is not a
    ///   regular file or is locked by another program (never moved aside);
    ///   `.newerSchema` for a database from a newer relink (either policy);
    ///   `.badState` for a corrupt or empty database under `.refuse`;
    ///   `.quarantineFailed` when moving it aside failed; `.storage` for a full
    ///   or read-only disk or other I/O failure. Each is logged at critical
    ///   with the path, the cause and the fix.
    public init(directory: String, policy: StoreOpenPolicy = .quarantineAndStartEmpty, logger: Logger) throws(StoreOpenError) {
        let opener = StoreOpener(directory: directory, policy: policy, logger: logger)
        let opened = try opener.open()
        (pool, quarantined, lock) = (opened.pool, opened.quarantined, opened.lock)
        preloaded = Mutex(opened.preloaded)
        databasePath = opener.databasePath
        committer = GroupCommitter(pool: pool)
        marker = CleanStopMarker(directory: directory)
        // Consumed in every case, so that it never outlives the run it describes.
        let clean = marker.consume()
        openedAfterCleanStop = clean && quarantined.isEmpty
    }

    /// Applies `mutations` in order, in one transaction, and returns after the commit.
    ///
    /// - Throws: `StoreError.invalidArgument`, `.unknownIdentifier`,
    ///   `.unknownPeripheral`, `.addressInUse`, `.invalidAcknowledgement` for a
    ///   bad request; `.diskFull`, `.readOnly`, `.corrupt`, `.io` for storage
    ///   failures; `.closed` after `close()`. On any error nothing of the list is stored.
    @discardableResult
    public func apply(_ mutations: [StoreMutation]) async throws(StoreError) -> StoreCommit {
        preloaded.withLock { $0 = nil }
        return try await committer.submit(mutations)
    }

    /// ``apply(_:)`` without waiting: the writer queue calls `completion`
    /// with the outcome once the commit has returned (durable, as for
    /// ``apply(_:)``). Requests submitted one after another are applied,
    /// and completed, in that order, each in its own savepoint: one
    /// request's invalid data fails only that request. A writer that must
    /// not wait for the disk (relinkd's loop) submits this way and goes on.
    public func submit(_ mutations: [StoreMutation], completion: @escaping @Sendable (Result<StoreCommit, StoreError>) -> Void) {
        preloaded.withLock { $0 = nil }
        committer.submit(mutations, completion: completion)
    }

    /// Loads every identifier with its intents, subscriptions and outbox
    /// status, and every peripheral, from one consistent snapshot.
    /// - Throws: `StoreError.corruptRow` for a row the schema should not allow, `.io` and others from SQLite.
    public func loadState() async throws(StoreError) -> StoredState {
        if let early = preloaded.withLock({ p in defer { p = nil }; return p }) { return try early.get() }
        return try await mappingErrors { try await pool.read { db in try StateLoader(db: db).load() } }
    }

    /// Events of `identifier` with a sequence number above `after`, oldest first, at most `limit`.
    /// - Throws: `StoreError.unknownIdentifier`, or a storage error.
    public func events(for identifier: RestoreIdentifier, after: Int64 = 0, limit: Int = 1000) async throws(StoreError) -> [OutboxEvent] {
        try await mappingErrors {
            try await pool.read { db in
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM restore_identifier WHERE id = ?", arguments: [identifier.rawValue]) != nil
                else { throw StoreError.unknownIdentifier(identifier) }
                return try Row.fetchAll(db, sql: """
                    SELECT identifier, seq, kind, payload, created_at FROM outbox_event
                    WHERE identifier = ? AND seq > ? ORDER BY seq LIMIT ?
                    """, arguments: [identifier.rawValue, after, max(0, limit)]).map(RowDecoding.event)
            }
        }
    }

    /// The outbox status of one identifier.
    /// - Throws: `StoreError.unknownIdentifier`, or a storage error.
    public func outboxStatus(for identifier: RestoreIdentifier) async throws(StoreError) -> OutboxStatus {
        try await mappingErrors {
            try await pool.read { db in
                guard let row = try Row.fetchOne(db, sql: """
                    SELECT next_event_seq, dropped_total, dropped_first_seq, dropped_last_seq,
                        (SELECT COUNT(*) FROM outbox_event WHERE identifier = ?1),
                        (SELECT MIN(seq) FROM outbox_event WHERE identifier = ?1)
                    FROM restore_identifier WHERE id = ?1
                    """, arguments: [identifier.rawValue]) else { throw StoreError.unknownIdentifier(identifier) }
                return try StateLoader.outboxStatus(row, startingAt: 0, pendingCount: row[4], firstSequence: row[5])
            }
        }
    }

    /// The peripheral at `address`, if relink has met it.
    /// - Throws: a storage error.
    public func peripheral(at address: DeviceAddress) async throws(StoreError) -> PeripheralRecord? {
        try await mappingErrors {
            try await pool.read { db in try StateLoader(db: db).peripherals(at: address).0.first }
        }
    }

    /// `PRAGMA integrity_check` output: `["ok"]` for a sound database.
    /// - Throws: a storage error.
    public func integrityCheck() async throws(StoreError) -> [String] {
        try await mappingErrors { try await pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") } }
    }

    /// Stops accepting writes, waits for queued ones, checkpoints the WAL into
    /// the database file, and closes the database. With `markingCleanStop`,
    /// then leaves the marker that the next opener reads as
    /// `openedAfterCleanStop` (the caller vouches that nothing it showed
    /// anyone is missing from the store). Releases the state directory's
    /// lock in every case, also when it throws.
    /// - Throws: `StoreError.io` when SQLite cannot close (a statement still
    ///   running) or the marker cannot be written.
    public func close(markingCleanStop: Bool = false) throws(StoreError) {
        committer.close()
        // Released also when closing fails: no write goes through this store any more.
        defer { lock.release() }
        do {
            try pool.barrierWriteWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try pool.close()
        } catch {
            throw StoreError.from(error)
        }
        if markingCleanStop { try marker.write() }
    }

    /// Test hook: every outbox event, grouped by identifier, oldest first.
    func allEventsForTesting() async throws -> [RestoreIdentifier: [OutboxEvent]] {
        try await pool.read { db in
            try Dictionary(grouping: Row.fetchAll(db, sql: """
                SELECT identifier, seq, kind, payload, created_at FROM outbox_event ORDER BY identifier, seq
                """).map(RowDecoding.event), by: \.identifier)
        }
    }

    /// Test hook: an integer PRAGMA as the writer connection sees it.
    func writerPragmaForTesting(_ name: String) throws -> Int? {
        try pool.barrierWriteWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA \(name)") }
    }

    /// Test hook: caps the database size at its current page count, so the
    /// next write that needs a new page fails as on a full disk.
    func capSizeForTesting() throws {
        try pool.barrierWriteWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 1
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
    }

    /// Test hook: lifts the cap of ``capSizeForTesting()`` (the disk has room again).
    func uncapSizeForTesting() throws {
        try pool.barrierWriteWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
    }

    /// Test hook: the writer stalls (a slow disk) from when this returns
    /// until the returned closure is called: commits wait, queued.
    func stallWritesForTesting() -> @Sendable () -> Void {
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        let pool = self.pool
        DispatchQueue.global().async {
            try? pool.barrierWriteWithoutTransaction { _ in
                entered.signal()
                gate.wait()
            }
        }
        entered.wait()
        return { gate.signal() }
    }

    /// Test hook: makes the writer connection refuse writes (`SQLITE_READONLY`).
    func setQueryOnlyForTesting(_ on: Bool) throws {
        try pool.barrierWriteWithoutTransaction { db in try db.execute(sql: "PRAGMA query_only = \(on ? 1 : 0)") }
    }
}
