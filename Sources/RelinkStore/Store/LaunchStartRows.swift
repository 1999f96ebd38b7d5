public import Foundation
import GRDB

/// The `launch_start` table (migration v9): when relinkd started each
/// relaunched program, within the start window (docs/relaunch.md#bounds).
struct LaunchStartRows {
    let db: Database

    /// Records a start of `target` at `date`, and deletes the starts before `since`.
    func record(_ target: String, at date: Date, keepingSince since: Date) throws {
        try db.cachedStatement(sql: "DELETE FROM launch_start WHERE started_at < ?").execute(arguments: [since.storedMilliseconds])
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO launch_start (target, started_at) VALUES (?, ?)")
            .execute(arguments: [target, date.storedMilliseconds])
    }

    /// The starts at or after `since`, by target, oldest first.
    func since(_ since: Date) throws -> [String: [Date]] {
        var starts: [String: [Date]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT target, started_at FROM launch_start WHERE started_at >= ? ORDER BY started_at",
                                    arguments: [since.storedMilliseconds]) {
            let target: String = row[0], at: Int64 = row[1]
            starts[target, default: []].append(Date(storedMilliseconds: at))
        }
        return starts
    }
}

extension RelinkStore {
    /// Records, durably, that relinkd is starting `target` (a bus name) at
    /// `date`, and forgets the starts older than `since` (the window's
    /// start): the start limit then holds across a relinkd restart.
    /// - Throws: a storage error.
    public func recordLaunchStart(_ target: String, at date: Date, keepingSince since: Date) async throws(StoreError) {
        try await mappingErrors { try await pool.write { db in try LaunchStartRows(db: db).record(target, at: date, keepingSince: since) } }
    }

    /// The starts recorded at or after `since`, by target, oldest first.
    /// - Throws: a storage error.
    public func launchStarts(since: Date) async throws(StoreError) -> [String: [Date]] {
        try await mappingErrors { try await pool.read { db in try LaunchStartRows(db: db).since(since) } }
    }
}
