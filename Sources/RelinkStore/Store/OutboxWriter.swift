import GRDB
import RelinkModel

/// The outbox's write rules: sequence numbers, the bound, acknowledgements.
///
/// The unacknowledged dropped sequence numbers are kept as one range
/// (`dropped_first_seq...dropped_last_seq`): the bound drops the oldest
/// events, and events that were never stored (``countUnstored(_:count:range:)``)
/// join it. The range covers every dropped number; it may also cover numbers
/// of events that were stored (after a failed commit, the next ones that
/// succeeded), which are replayed as usual.
struct OutboxWriter {
    let db: Database

    /// Appends an event and returns its sequence number, with what the
    /// bound dropped to make room.
    /// - Throws: `StoreError.unknownIdentifier`; `.invalidArgument` for a
    ///   chosen sequence number below the identifier's next one.
    func append(_ draft: OutboxEventDraft) throws -> (sequence: Int64, dropped: OutboxEffect?) {
        guard let next = try Int64.fetchOne(db.cachedStatement(sql: "SELECT next_event_seq FROM restore_identifier WHERE id = ?"),
                                            arguments: [draft.identifier.rawValue])
        else { throw StoreError.unknownIdentifier(draft.identifier) }
        let sequence = draft.sequence ?? next
        guard sequence >= next else {
            throw StoreError.invalidArgument("event sequence \(sequence) of \(draft.identifier) is below its next sequence \(next)")
        }
        try db.cachedStatement(sql: "INSERT INTO outbox_event (identifier, seq, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)").execute(
                       arguments: [draft.identifier.rawValue, sequence, draft.kind, draft.payload, draft.createdAt.storedMilliseconds])
        try db.cachedStatement(sql: "UPDATE restore_identifier SET next_event_seq = ? WHERE id = ?").execute(
                       arguments: [sequence + 1, draft.identifier.rawValue])
        return (sequence, try trim(draft.identifier))
    }

    /// Drops the oldest events past the identifier's bound, counting them.
    @discardableResult
    func trim(_ id: RestoreIdentifier) throws -> OutboxEffect? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT outbox_limit, (SELECT COUNT(*) FROM outbox_event WHERE identifier = ?1)
            FROM restore_identifier WHERE id = ?1
            """), arguments: [id.rawValue]) else { return nil }
        let limit: Int64 = row[0]
        let count: Int64 = row[1]
        guard count > limit else { return nil }
        let excess = count - limit
        guard let newest = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT MAX(seq) FROM (SELECT seq FROM outbox_event WHERE identifier = ? ORDER BY seq LIMIT ?)
            """), arguments: [id.rawValue, excess]),
            let oldest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(seq) FROM outbox_event WHERE identifier = ?"),
                                            arguments: [id.rawValue])
        else { return nil }
        try db.cachedStatement(sql: "DELETE FROM outbox_event WHERE identifier = ? AND seq <= ?").execute( arguments: [id.rawValue, newest])
        try db.cachedStatement(sql: """
            UPDATE restore_identifier SET dropped_total = dropped_total + ?1,
                dropped_first_seq = MIN(COALESCE(dropped_first_seq, ?2), ?2),
                dropped_last_seq = MAX(COALESCE(dropped_last_seq, ?3), ?3)
            WHERE id = ?4
            """).execute( arguments: [excess, oldest, newest, id.rawValue])
        return .dropped(id, count: excess, range: oldest...newest, first: try lowestStored(id))
    }

    /// Deletes events up to and including `through`. A `through` at or
    /// above the next sequence number names events the daemon numbered
    /// and sent but could not store (a full disk; their count follows in
    /// `countUnstored`): the next number moves above it, so that none of
    /// them is handed out again. The daemon checks `through` against what
    /// it numbered.
    func acknowledge(_ id: RestoreIdentifier, through: Int64) throws -> OutboxEffect {
        guard let next = try Int64.fetchOne(db.cachedStatement(sql: "SELECT next_event_seq FROM restore_identifier WHERE id = ?"),
                                            arguments: [id.rawValue])
        else { throw StoreError.unknownIdentifier(id) }
        guard through >= 0 else {
            throw StoreError.invalidAcknowledgement(id, through: through, nextSequence: next)
        }
        if through >= next {
            try db.cachedStatement(sql: "UPDATE restore_identifier SET next_event_seq = ? WHERE id = ?").execute(arguments: [through + 1, id.rawValue])
        }
        try db.cachedStatement(sql: "DELETE FROM outbox_event WHERE identifier = ? AND seq <= ?").execute( arguments: [id.rawValue, through])
        let deleted = db.changesCount
        try db.cachedStatement(sql: """
            UPDATE restore_identifier SET
                dropped_first_seq = CASE WHEN dropped_last_seq <= ?1 THEN NULL
                                         WHEN dropped_first_seq <= ?1 THEN ?1 + 1
                                         ELSE dropped_first_seq END,
                dropped_last_seq = CASE WHEN dropped_last_seq <= ?1 THEN NULL ELSE dropped_last_seq END
            WHERE id = ?2
            """).execute( arguments: [through, id.rawValue])
        return .acknowledged(id, through: through, deleted: deleted, first: try lowestStored(id))
    }

    /// Counts `count` events that were never stored as dropped, joins
    /// `range` to the dropped range and moves the next sequence number
    /// above it. Nothing for an identifier that is gone.
    func countUnstored(_ id: RestoreIdentifier, count: Int64, range: ClosedRange<Int64>?) throws -> OutboxEffect? {
        guard count > 0 else { return nil }
        try db.cachedStatement(sql: """
            UPDATE restore_identifier SET dropped_total = dropped_total + ?1,
                dropped_first_seq = CASE WHEN ?2 IS NULL THEN dropped_first_seq ELSE MIN(COALESCE(dropped_first_seq, ?2), ?2) END,
                dropped_last_seq = CASE WHEN ?3 IS NULL THEN dropped_last_seq ELSE MAX(COALESCE(dropped_last_seq, ?3), ?3) END,
                next_event_seq = CASE WHEN ?3 IS NULL THEN next_event_seq ELSE MAX(next_event_seq, ?3 + 1) END
            WHERE id = ?4
            """).execute(arguments: [count, range?.lowerBound, range?.upperBound, id.rawValue])
        return db.changesCount > 0 ? .unstoredCounted(id, count: count) : nil
    }

    private func lowestStored(_ id: RestoreIdentifier) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(seq) FROM outbox_event WHERE identifier = ?"), arguments: [id.rawValue])
    }
}
