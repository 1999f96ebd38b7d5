import Foundation
import GRDB
import RelinkModel

/// Applies mutations with SQL inside the caller's transaction. Throws
/// `StoreError` for request-scoped failures and GRDB errors for the rest.
struct MutationApplier {
    let db: Database

    func apply(_ mutations: [StoreMutation]) throws -> StoreCommit {
        var appended: [Int64] = []
        var effects: [OutboxEffect] = []
        for mutation in mutations {
            switch mutation {
            case .putIdentifier(let record): try putIdentifier(record, &effects)
            case .removeIdentifier(let id):
                try db.cachedStatement(sql: "DELETE FROM restore_identifier WHERE id = ?").execute( arguments: [id.rawValue])
            case .putScanIntent(let id, let scan): try putScanIntent(id, scan)
            case .removeScanIntent(let id):
                try db.cachedStatement(sql: "DELETE FROM scan_intent WHERE identifier = ?").execute( arguments: [id.rawValue])
            case .putConnectionEvents(let id, let registration): try putConnectionEvents(id, registration)
            case .removeConnectionEvents(let id):
                try db.cachedStatement(sql: "DELETE FROM connection_event_registration WHERE identifier = ?").execute(arguments: [id.rawValue])
            case .putPeripheral(let peripheral): try putPeripheral(peripheral)
            case .removePeripheral(let id):
                try db.cachedStatement(sql: "DELETE FROM peripheral WHERE id = ?").execute( arguments: [id.storedBlob])
            case .putConnectionIntent(let intent): try putConnectionIntent(intent)
            case .removeConnectionIntent(let id, let peripheral):
                try db.cachedStatement(sql: "DELETE FROM connection_intent WHERE identifier = ? AND peripheral_id = ?").execute(
                               arguments: [id.rawValue, peripheral.storedBlob])
            case .addSubscription(let subscription): try addSubscription(subscription)
            case .removeSubscription(let s):
                try db.cachedStatement(sql: """
                    DELETE FROM subscription
                    WHERE identifier = ? AND peripheral_id = ? AND service_uuid = ? AND characteristic_uuid = ?
                    """).execute( arguments: [s.identifier.rawValue, s.peripheral.storedBlob, s.characteristic.service.storedBlob,
                                          s.characteristic.characteristic.storedBlob])
            case .appendEvent(let draft):
                let (sequence, dropped) = try OutboxWriter(db: db).append(draft)
                appended.append(sequence)
                effects.append(.appended(draft.identifier, sequence: sequence))
                if let dropped { effects.append(dropped) }
            case .acknowledgeEvents(let id, let through): effects.append(try OutboxWriter(db: db).acknowledge(id, through: through))
            case .countUnstoredEvents(let id, let count, let range):
                if let effect = try OutboxWriter(db: db).countUnstored(id, count: count, range: range) { effects.append(effect) }
            case .putAdapterState(let adapter, let status):
                try db.cachedStatement(sql: """
                    INSERT INTO adapter_state (adapter, state, roles, announced_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (adapter) DO UPDATE SET state = excluded.state, roles = excluded.roles,
                        announced_at = excluded.announced_at
                    """).execute(arguments: [adapter, status.state.rawValue, RowDecoding.storedText(status.roles), Date().storedMilliseconds])
            case .putGattDatabase(let peripheral, let database):
                try requirePeripheral(peripheral)
                try db.cachedStatement(sql: """
                    INSERT INTO gatt_database (peripheral_id, layout, read_at) VALUES (?, ?, ?)
                    ON CONFLICT (peripheral_id) DO UPDATE SET layout = excluded.layout, read_at = excluded.read_at
                    """).execute(arguments: [peripheral.storedBlob, database.json, database.readAt.storedMilliseconds])
            case .putPeripheralManager(let id, let record):
                try requireIdentifier(id)
                guard !record.isEmpty else {
                    try db.cachedStatement(sql: "DELETE FROM peripheral_manager WHERE identifier = ?").execute(arguments: [id.rawValue])
                    continue
                }
                try db.cachedStatement(sql: """
                    INSERT INTO peripheral_manager (identifier, state, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (identifier) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
                    """).execute(arguments: [id.rawValue, record.json, Date().storedMilliseconds])
            case .putLaunchSpec(let id, let spec):
                try requireIdentifier(id)
                try LaunchSpecRows(db: db).put(id, spec)
            case .putTransfer(let transfer):
                try requireIdentifier(transfer.identifier)
                try requirePeripheral(transfer.peripheral)
                try putTransfer(transfer)
            case .setTransferOffset(let id, let confirmed): try setTransferOffset(id, confirmed)
            case .removeTransfer(let id): try removeTransfer(id)
            }
        }
        return StoreCommit(appendedSequences: appended, outboxEffects: effects)
    }

    private func putIdentifier(_ record: RestoreIdentifierRecord, _ effects: inout [OutboxEffect]) throws {
        try db.cachedStatement(sql: """
            INSERT INTO restore_identifier (id, owner_uid, name_preference, outbox_limit, created_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET owner_uid = excluded.owner_uid,
                name_preference = excluded.name_preference, outbox_limit = excluded.outbox_limit
            """).execute( arguments: [record.id.rawValue, Int64(record.ownerUID), record.namePreference.rawValue,
                             record.outboxLimit, record.createdAt.storedMilliseconds])
        if let dropped = try OutboxWriter(db: db).trim(record.id) { effects.append(dropped) }
    }

    private func putScanIntent(_ id: RestoreIdentifier, _ scan: ScanIntent) throws {
        guard scan.minimumRSSI == nil, !scan.lowDuty else {
            throw StoreError.invalidArgument("an identifier's scan intent has no RSSI limit and no low duty")
        }
        try requireIdentifier(id)
        try db.cachedStatement(sql: """
            INSERT INTO scan_intent (identifier, service_uuids, allow_duplicates, updated_at, data_prefixes) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (identifier) DO UPDATE SET service_uuids = excluded.service_uuids,
                allow_duplicates = excluded.allow_duplicates, updated_at = excluded.updated_at,
                data_prefixes = excluded.data_prefixes
            """).execute( arguments: [id.rawValue, scan.services.sorted().storedList, scan.allowDuplicates,
                             Date().storedMilliseconds, scan.dataPrefixes.storedText])
    }

    private func putConnectionEvents(_ id: RestoreIdentifier, _ registration: ConnectionEventRegistration) throws {
        try requireIdentifier(id)
        try db.cachedStatement(sql: """
            INSERT INTO connection_event_registration (identifier, service_uuids, peripheral_ids, told_connected, updated_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (identifier) DO UPDATE SET service_uuids = excluded.service_uuids,
                peripheral_ids = excluded.peripheral_ids, told_connected = excluded.told_connected, updated_at = excluded.updated_at
            """).execute(arguments: [id.rawValue, registration.services.sorted().storedList, registration.peripherals.sorted().storedList,
                                    registration.told.sorted().storedList, Date().storedMilliseconds])
    }

    private func putPeripheral(_ p: PeripheralRecord) throws {
        let holder = try Data.fetchOne(db.cachedStatement(sql: """
            SELECT id FROM peripheral WHERE adapter = ? AND address = ? AND address_type = ?
            """), arguments: [p.address.adapter, p.address.address.string, p.address.addressType.rawValue])
        if let holder, holder != p.id.storedBlob { throw StoreError.addressInUse(p.address) }
        try db.cachedStatement(sql: """
            INSERT INTO peripheral (id, adapter, address, address_type, advertising_name, advertising_name_seen_at,
                gap_name, gap_name_seen_at, alias, service_uuids, last_seen_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET adapter = excluded.adapter, address = excluded.address,
                address_type = excluded.address_type, advertising_name = excluded.advertising_name,
                advertising_name_seen_at = excluded.advertising_name_seen_at, gap_name = excluded.gap_name,
                gap_name_seen_at = excluded.gap_name_seen_at, alias = excluded.alias,
                service_uuids = excluded.service_uuids, last_seen_at = excluded.last_seen_at
            """).execute( arguments: [p.id.storedBlob, p.address.adapter, p.address.address.string, p.address.addressType.rawValue,
                             p.advertisingName?.value, p.advertisingName?.seenAt.storedMilliseconds,
                             p.gapName?.value, p.gapName?.seenAt.storedMilliseconds, p.alias,
                             p.serviceUUIDs.storedList, p.lastSeenAt?.storedMilliseconds, p.createdAt.storedMilliseconds])
    }

    private func putConnectionIntent(_ c: ConnectionIntent) throws {
        try requireIdentifier(c.identifier)
        try requirePeripheral(c.peripheral)
        try db.cachedStatement(sql: """
            INSERT INTO connection_intent (identifier, peripheral_id, state, step_timeout_ms, overall_timeout_ms,
                strategies, requested_at, attempts, last_error_class, last_error_message,
                match_name, match_manufacturer_id, match_services, match_data_prefixes, pair_on_demand,
                bonded, identity_address, pairing_capability)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (identifier, peripheral_id) DO UPDATE SET state = excluded.state,
                step_timeout_ms = excluded.step_timeout_ms, overall_timeout_ms = excluded.overall_timeout_ms,
                strategies = excluded.strategies, requested_at = excluded.requested_at, attempts = excluded.attempts,
                last_error_class = excluded.last_error_class, last_error_message = excluded.last_error_message,
                match_name = excluded.match_name, match_manufacturer_id = excluded.match_manufacturer_id,
                match_services = excluded.match_services, match_data_prefixes = excluded.match_data_prefixes,
                pair_on_demand = excluded.pair_on_demand, bonded = excluded.bonded,
                identity_address = excluded.identity_address, pairing_capability = excluded.pairing_capability
            """).execute( arguments: [c.identifier.rawValue, c.peripheral.storedBlob, c.state.rawValue,
                             c.stepTimeout?.storedMilliseconds, c.overallTimeout?.storedMilliseconds,
                             RowDecoding.storedText(c.strategies), c.requestedAt.storedMilliseconds,
                             c.attempts, c.lastErrorClass, c.lastErrorMessage,
                             c.matchName, c.matchManufacturerID.map { Int64($0) }, c.matchServices.storedList,
                             c.matchDataPrefixes.storedText, c.pairOnDemand, c.bond.bonded, c.bond.identityAddress,
                             c.pairingCapability.rawValue])
    }

    private func addSubscription(_ s: Subscription) throws {
        try requireIdentifier(s.identifier)
        try requirePeripheral(s.peripheral)
        try db.cachedStatement(sql: """
            INSERT INTO subscription (identifier, peripheral_id, service_uuid, characteristic_uuid, created_at)
            VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """).execute( arguments: [s.identifier.rawValue, s.peripheral.storedBlob, s.characteristic.service.storedBlob,
                             s.characteristic.characteristic.storedBlob, Date().storedMilliseconds])
    }

    private func requireIdentifier(_ id: RestoreIdentifier) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM restore_identifier WHERE id = ?"), arguments: [id.rawValue]) != nil
        else { throw StoreError.unknownIdentifier(id) }
    }

    private func requirePeripheral(_ id: PeripheralID) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM peripheral WHERE id = ?"), arguments: [id.storedBlob]) != nil
        else { throw StoreError.unknownPeripheral(id.storedText) }
    }
}
