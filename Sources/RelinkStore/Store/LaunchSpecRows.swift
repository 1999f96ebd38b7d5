import Foundation
import GRDB
public import RelinkModel

/// The `launch_spec` table (migration v8; `systemd_unit` v9): one row per
/// identifier that asked to be relaunched, its wake kinds as a JSON array of names.
struct LaunchSpecRows {
    let db: Database

    /// Replaces the identifier's spec; nil deletes it.
    func put(_ id: RestoreIdentifier, _ spec: LaunchSpec?) throws {
        guard let spec else {
            try db.cachedStatement(sql: "DELETE FROM launch_spec WHERE identifier = ?").execute(arguments: [id.rawValue])
            return
        }
        let wakeOn = String(decoding: try JSONEncoder().encode(spec.wakeOn), as: UTF8.self)
        try db.cachedStatement(sql: """
            INSERT INTO launch_spec (identifier, bus_name, wake_on, updated_at, systemd_unit) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (identifier) DO UPDATE SET bus_name = excluded.bus_name, wake_on = excluded.wake_on,
                updated_at = excluded.updated_at, systemd_unit = excluded.systemd_unit
            """).execute(arguments: [id.rawValue, spec.busName, wakeOn, Date().storedMilliseconds, spec.systemdUnit])
    }

    /// Every stored spec; a row that does not decode is left out and reported.
    func all() throws -> ([RestoreIdentifier: LaunchSpec], [UnreadableRow]) {
        var specs: [RestoreIdentifier: LaunchSpec] = [:]
        var unreadable: [UnreadableRow] = []
        for row in try Row.fetchAll(db, sql: "SELECT identifier, bus_name, wake_on, systemd_unit FROM launch_spec ORDER BY identifier") {
            let key: String = row[0]
            guard let id = try? RestoreIdentifier(key), let name: String = row[1], let json: String = row[2],
                  let wakeOn = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else {
                unreadable.append(UnreadableRow(table: "launch_spec", identifier: key, reason: "launch_spec: a column does not decode"))
                continue
            }
            specs[id] = LaunchSpec(busName: name, wakeOn: wakeOn, systemdUnit: row[3])
        }
        return (specs, unreadable)
    }
}

extension RelinkStore {
    /// Every identifier's launch spec (docs/relaunch.md), and the rows that
    /// could not be read (kept in the file, not loaded).
    /// - Throws: a storage error.
    public func launchSpecs() async throws(StoreError) -> (specs: [RestoreIdentifier: LaunchSpec], unreadable: [UnreadableRow]) {
        try await mappingErrors { try await pool.read { db in try LaunchSpecRows(db: db).all() } }
    }
}
