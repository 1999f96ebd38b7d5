import Foundation
import GRDB
import RelinkModel

/// Reads the whole state (without outbox events). The two halves (the
/// identifiers with what hangs on them; the peripherals) can run on two
/// readers at once; rows are decoded straight from SQLite's columns
/// (``RawColumns``), as strictly as ``RowDecoding``: a value the schema's
/// CHECKs should have prevented is `StoreError.corruptRow`. Such a row is
/// not loaded and not dropped: it is listed in ``StoredState/unreadable``
/// (with its identifier) and stays in the file; the rest loads.
struct StateLoader {
    let db: Database

    func load() throws -> StoredState {
        let (identifiers, unreadableIdentifiers) = try identifiers()
        let (peripherals, unreadablePeripherals) = try peripherals()
        let (adapters, unreadableAdapters) = try adapterStates()
        let (databases, unreadableDatabases) = try gattDatabases()
        let (managers, unreadableManagers) = try peripheralManagers()
        let (transfers, unreadableTransfers) = try transfers()
        var state = StoredState(identifiers: identifiers, peripherals: peripherals,
                                unreadable: unreadableIdentifiers + unreadablePeripherals + unreadableAdapters + unreadableDatabases + unreadableManagers
                                    + unreadableTransfers,
                                adapterStates: adapters, gattDatabases: databases)
        state.peripheralManagers = managers
        state.transfers = transfers
        return state
    }

    /// Each identifier's peripheral role, and the rows that could not be read.
    func peripheralManagers() throws -> ([RestoreIdentifier: PeripheralManagerRecord], [UnreadableRow]) {
        var unreadable: [UnreadableRow] = []
        var managers: [RestoreIdentifier: PeripheralManagerRecord] = [:]
        try rows("SELECT identifier, state FROM peripheral_manager ORDER BY identifier", table: "peripheral_manager", into: &unreadable) { c, cache in
            let id = try cache.identifier(c, 0)
            do { managers[id] = try PeripheralManagerRecord(json: c.text(1) ?? "") } catch {
                throw StoreError.corruptRow("peripheral_manager.state: \(error)")
            }
        }
        return (managers, unreadable)
    }

    /// The GATT database last read from each peripheral, and the rows that
    /// could not be read.
    func gattDatabases() throws -> ([PeripheralID: GattDatabase], [UnreadableRow]) {
        var unreadable: [UnreadableRow] = []
        var databases: [PeripheralID: GattDatabase] = [:]
        try rows("SELECT peripheral_id, layout, read_at FROM gatt_database ORDER BY peripheral_id", table: "gatt_database", into: &unreadable) { c, _ in
            let peripheral = PeripheralID(try c.uuid(0, "gatt_database.peripheral_id"))
            var database: GattDatabase
            do { database = try GattDatabase(json: c.text(1) ?? "") } catch { throw StoreError.corruptRow("gatt_database.layout: \(error)") }
            database.readAt = Date(storedMilliseconds: try c.int64(2))
            databases[peripheral] = database
        }
        return (databases, unreadable)
    }

    /// The adapter status last announced per adapter, and the rows that
    /// could not be read.
    func adapterStates() throws -> ([String: AdapterStatus], [UnreadableRow]) {
        var unreadable: [UnreadableRow] = []
        var states: [String: AdapterStatus] = [:]
        try rows("SELECT adapter, state, roles FROM adapter_state ORDER BY adapter", table: "adapter_state", into: &unreadable) { c, _ in
            guard let adapter = c.text(0) else { throw StoreError.corruptRow("adapter_state.adapter") }
            let state: AdapterState = try c.enumValue(1, "adapter_state.state")
            states[adapter] = AdapterStatus(state, roles: try RowDecoding.roleList(c.text(2) ?? ""))
        }
        return (states, unreadable)
    }

    /// Every identifier with its scan intent, connection intents, subscriptions
    /// and outbox status, and the rows that could not be read.
    func identifiers() throws -> ([StoredState.Identifier], [UnreadableRow]) {
        var unreadable: [UnreadableRow] = []
        var scans: [String: ScanIntent] = [:]
        try rows("SELECT identifier, service_uuids, allow_duplicates, updated_at, data_prefixes FROM scan_intent", table: "scan_intent", into: &unreadable) { c, cache in
            let id = try cache.identifier(c, 0)
            scans[id.rawValue] = ScanIntent(services: Set(try c.uuidList(1, "scan_intent.service_uuids")),
                                            allowDuplicates: try c.bool(2),
                                            dataPrefixes: try AdvertisingDataPrefix.fromStoredText(c.text(4), column: "scan_intent.data_prefixes"))
        }
        var registrations: [String: ConnectionEventRegistration] = [:]
        try rows("SELECT identifier, service_uuids, peripheral_ids, told_connected FROM connection_event_registration",
                 table: "connection_event_registration", into: &unreadable) { c, cache in
            let id = try cache.identifier(c, 0)
            registrations[id.rawValue] = ConnectionEventRegistration(
                services: Set(try c.uuidList(1, "connection_event_registration.service_uuids")),
                peripherals: Set(try c.peripheralList(2, "connection_event_registration.peripheral_ids")),
                told: Set(try c.peripheralList(3, "connection_event_registration.told_connected")))
        }
        var connections: [String: [ConnectionIntent]] = [:]
        var run: [ConnectionIntent] = []
        try rows("""
            SELECT identifier, peripheral_id, state, step_timeout_ms, overall_timeout_ms, strategies, requested_at,
                attempts, last_error_class, last_error_message, match_name, match_manufacturer_id, match_services,
                match_data_prefixes, pair_on_demand, bonded, identity_address, pairing_capability
            FROM connection_intent ORDER BY identifier, peripheral_id
            """, table: "connection_intent", into: &unreadable) { c, cache in
            let intent = try Self.connectionIntent(c, &cache)
            if let last = run.last, last.identifier != intent.identifier {
                connections[last.identifier.rawValue] = run
                run.removeAll(keepingCapacity: true)
            }
            run.append(intent)
        }
        if let last = run.last { connections[last.identifier.rawValue] = run }
        var subscriptions: [String: [Subscription]] = [:]
        var subscriptionRun: [Subscription] = []
        try rows("""
            SELECT identifier, peripheral_id, service_uuid, characteristic_uuid
            FROM subscription ORDER BY identifier, peripheral_id, service_uuid, characteristic_uuid
            """, table: "subscription", into: &unreadable) { c, cache in
            let subscription = Subscription(
                identifier: try cache.identifier(c, 0), peripheral: PeripheralID(try c.uuid(1, "subscription.peripheral_id")),
                characteristic: CharacteristicKey(service: try c.bluetoothUUID(2, "subscription.service_uuid"),
                                                  characteristic: try c.bluetoothUUID(3, "subscription.characteristic_uuid")))
            if let last = subscriptionRun.last, last.identifier != subscription.identifier {
                subscriptions[last.identifier.rawValue] = subscriptionRun
                subscriptionRun.removeAll(keepingCapacity: true)
            }
            subscriptionRun.append(subscription)
        }
        if let last = subscriptionRun.last { subscriptions[last.identifier.rawValue] = subscriptionRun }
        var pending: [String: (count: Int, first: Int64?)] = [:]
        try Row.fetchCursor(db, sql: "SELECT identifier, COUNT(*), MIN(seq) FROM outbox_event GROUP BY identifier").forEach { row in
            pending[row[0]] = (row[1], row[2])
        }
        var identifiers: [StoredState.Identifier] = []
        try rows("""
            SELECT id, owner_uid, name_preference, outbox_limit, created_at,
                next_event_seq, dropped_total, dropped_first_seq, dropped_last_seq
            FROM restore_identifier ORDER BY id
            """, table: "restore_identifier", into: &unreadable) { c, cache in
            let id = try cache.identifier(c, 0)
            guard let ownerUID = UInt32(exactly: try c.int64(1)) else { throw StoreError.corruptRow("owner_uid") }
            let record: RestoreIdentifierRecord
            do {
                record = try RestoreIdentifierRecord(id: id, ownerUID: ownerUID, namePreference: c.enumValue(2, "name_preference"),
                                                     outboxLimit: Int(try c.int64(3)), createdAt: Date(storedMilliseconds: try c.int64(4)))
            } catch { throw StoreError.corruptRow("restore_identifier: \(error)") }
            let key = id.rawValue
            let range = try Self.droppedRange(try c.optionalInt64(7), try c.optionalInt64(8))
            identifiers.append(StoredState.Identifier(
                record: record, scan: scans[key], connections: connections[key] ?? [],
                subscriptions: subscriptions[key] ?? [],
                outbox: OutboxStatus(nextSequence: try c.int64(5), pendingCount: pending[key]?.count ?? 0, droppedTotal: try c.int64(6),
                                     droppedRange: range, firstSequence: pending[key]?.first),
                connectionEvents: registrations[key]))
        }
        // Rows of an identifier whose own row could not be read are kept
        // aside with it, and said so.
        let loaded = Set(identifiers.map(\.record.id.rawValue))
        for key in Set(scans.keys).union(connections.keys).union(subscriptions.keys).union(registrations.keys).subtracting(loaded).sorted() {
            unreadable.append(UnreadableRow(table: "scan_intent, connection_intent, subscription, connection_event_registration", identifier: key,
                                            reason: "its identifier's row could not be read"))
        }
        return (identifiers, unreadable)
    }

    /// Every peripheral, by id, or only the one at `address`; and the rows
    /// that could not be read.
    func peripherals(at address: DeviceAddress? = nil) throws -> ([PeripheralRecord], [UnreadableRow]) {
        var unreadable: [UnreadableRow] = []
        var peripherals: [PeripheralRecord] = []
        let filter = address == nil ? "" : "WHERE adapter = ? AND address = ? AND address_type = ?"
        let arguments: StatementArguments = address.map { [$0.adapter, $0.address.string, $0.addressType.rawValue] } ?? []
        try rows("""
            SELECT id, adapter, address, address_type, advertising_name, advertising_name_seen_at, gap_name,
                gap_name_seen_at, alias, service_uuids, last_seen_at, created_at
            FROM peripheral \(filter) ORDER BY id
            """, arguments: arguments, table: "peripheral", into: &unreadable) { c, _ in
            let address: DeviceAddress
            do {
                address = try DeviceAddress(adapter: c.text(1) ?? "", address: c.text(2) ?? "", addressType: c.text(3) ?? "")
            } catch { throw StoreError.corruptRow("peripheral address: \(error)") }
            let advertised = c.text(4), gap = c.text(6)
            do {
                peripherals.append(try PeripheralRecord(
                    id: PeripheralID(c.uuid(0, "peripheral.id")), address: address,
                    advertisingName: advertised.map { .init($0, seenAt: Date(storedMilliseconds: try c.optionalInt64(5) ?? 0)) },
                    gapName: gap.map { .init($0, seenAt: Date(storedMilliseconds: try c.optionalInt64(7) ?? 0)) },
                    alias: c.text(8), serviceUUIDs: c.uuidList(9, "peripheral.service_uuids"),
                    lastSeenAt: try c.optionalInt64(10).map(Date.init(storedMilliseconds:)),
                    createdAt: Date(storedMilliseconds: try c.int64(11))))
            } catch { throw StoreError.corruptRow("peripheral: \(error)") }
        }
        return (peripherals, unreadable)
    }

    /// Steps `sql` and hands each row's columns to `body`. A row `body`
    /// cannot decode (`StoreError.corruptRow`) is listed in `unreadable`
    /// with the text of its first column (its identifier) and skipped;
    /// any other error ends the load.
    func rows(_ sql: String, arguments: StatementArguments = [], table: String, into unreadable: inout [UnreadableRow],
                      _ body: (RawColumns, inout RawIdentifierCache) throws -> Void) throws {
        let statement = try db.makeStatement(sql: sql)
        let columns = RawColumns(statement)
        var cache = RawIdentifierCache()
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        while try cursor.next() != nil {
            do {
                try body(columns, &cache)
            } catch let error as StoreError {
                guard case .corruptRow(let why) = error else { throw error }
                let key = columns.text(0) ?? columns.withBlob(0) { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
                unreadable.append(UnreadableRow(table: table, identifier: key, reason: why))
            }
        }
    }

    /// `connection_intent` columns in table order.
    private static func connectionIntent(_ c: RawColumns, _ cache: inout RawIdentifierCache) throws(StoreError) -> ConnectionIntent {
        let strategies: [Strategy]
        if c.textEquals(5, RowDecoding.defaultStrategyText) {
            strategies = Strategy.defaultOrder
        } else {
            do { strategies = try RowDecoding.strategyList(c.text(5) ?? "") } catch { throw .corruptRow("connection_intent.strategies") }
        }
        let stepMs = try c.optionalInt64(3), overallMs = try c.optionalInt64(4)
        var manufacturer: UInt16?
        if let id = try c.optionalInt64(11) {
            guard let value = UInt16(exactly: id) else { throw .corruptRow("connection_intent.match_manufacturer_id") }
            manufacturer = value
        }
        let matchServices = try c.uuidList(12, "connection_intent.match_services")
        let matchPrefixes = try AdvertisingDataPrefix.fromStoredText(c.text(13), column: "connection_intent.match_data_prefixes")
        do {
            return try ConnectionIntent(
                identifier: cache.identifier(c, 0), peripheral: PeripheralID(c.uuid(1, "connection_intent.peripheral_id")),
                state: c.enumValue(2, "connection_intent.state"),
                stepTimeout: stepMs.map { .milliseconds($0) }, overallTimeout: overallMs.map { .milliseconds($0) },
                strategies: strategies, requestedAt: Date(storedMilliseconds: try c.int64(6)), attempts: Int(try c.int64(7)),
                lastErrorClass: c.text(8), lastErrorMessage: c.text(9),
                matchName: c.text(10), matchManufacturerID: manufacturer, matchServices: matchServices,
                matchDataPrefixes: matchPrefixes.sorted(), pairOnDemand: try c.bool(14),
                bond: IntentBond(bonded: try c.bool(15), identityAddress: try c.bool(16)),
                pairingCapability: c.enumValue(17, "connection_intent.pairing_capability"))
        } catch {
            if case .invalidArgument(let why) = error { throw .corruptRow("connection_intent: \(why)") }
            throw error
        }
    }

    /// Decodes next_event_seq, dropped_total, dropped_first_seq, dropped_last_seq from `row[index...]`.
    static func outboxStatus(_ row: Row, startingAt index: Int, pendingCount: Int, firstSequence: Int64?) throws -> OutboxStatus {
        OutboxStatus(nextSequence: row[index], pendingCount: pendingCount, droppedTotal: row[index + 1],
                     droppedRange: try droppedRange(row[index + 2], row[index + 3]), firstSequence: firstSequence)
    }

    /// `dropped_first_seq`, `dropped_last_seq` as a range (nil: none dropped).
    /// - Throws: `StoreError.corruptRow` when the first is above the last.
    static func droppedRange(_ first: Int64?, _ last: Int64?) throws(StoreError) -> ClosedRange<Int64>? {
        guard let first, let last else { return nil }
        guard first <= last else { throw .corruptRow("dropped sequence range") }
        return first...last
    }
}

/// Remembers the last validated restore identifier, comparing the column's
/// bytes, so that consecutive rows of one identifier (rows come ordered by
/// identifier) are validated, and made into a `String`, once.
struct RawIdentifierCache {
    private var last: RestoreIdentifier?

    mutating func identifier(_ c: RawColumns, _ index: CInt) throws(StoreError) -> RestoreIdentifier {
        if let last, c.textEquals(index, last.rawValue) { return last }
        guard let text = c.text(index) else { throw .corruptRow("restore identifier") }
        do {
            let value = try RestoreIdentifier(text)
            last = value
            return value
        } catch { throw .corruptRow("restore identifier") }
    }
}
