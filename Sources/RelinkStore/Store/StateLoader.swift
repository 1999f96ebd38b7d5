import GRDB

/// Reads the whole state (without outbox events) in one read transaction.
struct StateLoader {
    let db: Database

    func load() throws -> StoredState {
        var scans: [String: ScanIntent] = [:]
        try Row.fetchCursor(db, sql: "SELECT identifier, service_uuids, allow_duplicates, updated_at FROM scan_intent").forEach { row in
            let scan = try RowDecoding.scanIntent(row)
            scans[scan.identifier.rawValue] = scan
        }
        var connections: [String: [ConnectionIntent]] = [:]
        var cache = IdentifierCache()
        try Row.fetchCursor(db, sql: """
            SELECT identifier, peripheral_id, state, step_timeout_ms, overall_timeout_ms, strategies, requested_at,
                attempts, last_error_class, last_error_message
            FROM connection_intent ORDER BY identifier, peripheral_id
            """).forEach { row in
            let intent = try RowDecoding.connectionIntent(row, cache: &cache)
            connections[intent.identifier.rawValue, default: []].append(intent)
        }
        var subscriptions: [String: [Subscription]] = [:]
        try Row.fetchCursor(db, sql: """
            SELECT identifier, peripheral_id, service_uuid, characteristic_uuid, created_at
            FROM subscription ORDER BY identifier, peripheral_id, service_uuid, characteristic_uuid
            """).forEach { row in
            let subscription = try RowDecoding.subscription(row, cache: &cache)
            subscriptions[subscription.identifier.rawValue, default: []].append(subscription)
        }
        var pending: [String: (count: Int, first: Int64?)] = [:]
        try Row.fetchCursor(db, sql: "SELECT identifier, COUNT(*), MIN(seq) FROM outbox_event GROUP BY identifier").forEach { row in
            pending[row[0]] = (row[1], row[2])
        }
        var identifiers: [StoredState.Identifier] = []
        try Row.fetchCursor(db, sql: """
            SELECT id, owner_uid, name_preference, outbox_limit, created_at,
                next_event_seq, dropped_total, dropped_first_seq, dropped_last_seq
            FROM restore_identifier ORDER BY id
            """).forEach { row in
            let record = try RowDecoding.identifierRecord(row)
            let key = record.id.rawValue
            identifiers.append(StoredState.Identifier(
                record: record, scan: scans[key], connections: connections[key] ?? [],
                subscriptions: subscriptions[key] ?? [],
                outbox: try Self.outboxStatus(row, startingAt: 5, pendingCount: pending[key]?.count ?? 0,
                                              firstSequence: pending[key]?.first)))
        }
        var peripherals: [PeripheralRecord] = []
        let peripheralRows = try Row.fetchCursor(db, sql: """
            SELECT id, adapter, address, address_type, advertising_name, advertising_name_seen_at, gap_name,
                gap_name_seen_at, alias, service_uuids, last_seen_at, created_at
            FROM peripheral ORDER BY id
            """)
        while let row = try peripheralRows.next() { peripherals.append(try RowDecoding.peripheral(row)) }
        return StoredState(identifiers: identifiers, peripherals: peripherals)
    }

    /// Decodes next_event_seq, dropped_total, dropped_first_seq, dropped_last_seq from `row[index...]`.
    static func outboxStatus(_ row: Row, startingAt index: Int, pendingCount: Int, firstSequence: Int64?) throws -> OutboxStatus {
        let first: Int64? = row[index + 2]
        let last: Int64? = row[index + 3]
        var range: ClosedRange<Int64>?
        if let first, let last {
            guard first <= last else { throw StoreError.corruptRow("dropped sequence range") }
            range = first...last
        }
        return OutboxStatus(nextSequence: row[index], pendingCount: pendingCount, droppedTotal: row[index + 1], droppedRange: range,
                            firstSequence: firstSequence)
    }
}
