import Foundation
import GRDB

/// Decoding of stored rows into records. A value the schema's CHECKs should
/// have prevented raises `StoreError.corruptRow`.
enum RowDecoding {
    static func identifier(_ text: String) throws -> RestoreIdentifier {
        do { return try RestoreIdentifier(text) } catch { throw StoreError.corruptRow("restore identifier") }
    }

    /// A 16-byte BLOB column as a UUID.
    static func uuid(_ row: Row, _ index: Int, _ column: String) throws -> UUID {
        let value = try row.withUnsafeData(atIndex: index) { data in data.flatMap { $0.count == 16 ? UUID(storedBlob: $0) : nil } }
        guard let value else { throw StoreError.corruptRow(column) }
        return value
    }

    static func bluetoothUUID(_ row: Row, _ index: Int, _ column: String) throws -> BluetoothUUID {
        BluetoothUUID(value: try uuid(row, index, column))
    }

    static func uuidList(_ row: Row, _ index: Int, _ column: String) throws -> [BluetoothUUID] {
        try row.withUnsafeData(atIndex: index) { data throws(StoreError) in
            guard let data else { throw StoreError.corruptRow(column) }
            return try [BluetoothUUID].fromStoredList(data, column: column)
        }
    }

    static func enumValue<E: RawRepresentable<String>>(_ text: String, _ column: String) throws -> E {
        guard let value = E(rawValue: text) else { throw StoreError.corruptRow(column) }
        return value
    }

    static func date(_ ms: Int64?) -> Date? { ms.map(Date.init(storedMilliseconds:)) }

    /// `restore_identifier` columns: id, owner_uid, name_preference, outbox_limit, created_at.
    static func identifierRecord(_ row: Row) throws -> RestoreIdentifierRecord {
        let uid: Int64 = row[1]
        guard let ownerUID = UInt32(exactly: uid) else { throw StoreError.corruptRow("owner_uid") }
        return try RestoreIdentifierRecord(id: identifier(row[0]), ownerUID: ownerUID,
                                           namePreference: enumValue(row[2], "name_preference"),
                                           outboxLimit: row[3], createdAt: Date(storedMilliseconds: row[4]))
    }

    /// `scan_intent` columns: identifier, service_uuids, allow_duplicates, updated_at.
    static func scanIntent(_ row: Row) throws -> ScanIntent {
        ScanIntent(identifier: try identifier(row[0]),
                   serviceUUIDs: try uuidList(row, 1, "scan_intent.service_uuids"),
                   allowDuplicates: row[2], updatedAt: Date(storedMilliseconds: row[3]))
    }

    /// `connection_intent` columns in table order.
    static func connectionIntent(_ row: Row) throws -> ConnectionIntent {
        var cache = IdentifierCache()
        return try connectionIntent(row, cache: &cache)
    }

    /// As `connectionIntent(_:)`, validating each distinct identifier text once (rows come ordered by identifier).
    static func connectionIntent(_ row: Row, cache: inout IdentifierCache) throws -> ConnectionIntent {
        let strategies = try strategyList(row[5])
        let stepMs: Int64? = row[3]
        let overallMs: Int64? = row[4]
        do {
            return try ConnectionIntent(
                identifier: cache.identifier(row[0]), peripheral: uuid(row, 1, "connection_intent.peripheral_id"),
                state: enumValue(row[2], "connection_intent.state"),
                stepTimeout: stepMs.map { .milliseconds($0) }, overallTimeout: overallMs.map { .milliseconds($0) },
                strategies: strategies, requestedAt: Date(storedMilliseconds: row[6]), attempts: row[7],
                lastErrorClass: row[8], lastErrorMessage: row[9])
        } catch let error as StoreError {
            if case .invalidArgument(let why) = error { throw StoreError.corruptRow("connection_intent: \(why)") }
            throw error
        }
    }

    static let defaultStrategyText = ConnectionIntent.defaultStrategies.map(\.rawValue).joined(separator: ",")

    /// Parses a comma-separated strategy list (the default order without splitting).
    static func strategyList(_ text: String) throws -> [ConnectionIntent.Strategy] {
        if text == defaultStrategyText { return ConnectionIntent.defaultStrategies }
        return try text.utf8.split(separator: UInt8(ascii: ",")).map {
            try enumValue(String(decoding: $0, as: UTF8.self), "connection_intent.strategies")
        }
    }

    /// `subscription` columns: identifier, peripheral_id, service_uuid, characteristic_uuid, created_at.
    static func subscription(_ row: Row) throws -> Subscription {
        var cache = IdentifierCache()
        return try subscription(row, cache: &cache)
    }

    /// As `subscription(_:)`, validating each distinct identifier text once.
    static func subscription(_ row: Row, cache: inout IdentifierCache) throws -> Subscription {
        Subscription(identifier: try cache.identifier(row[0]), peripheral: try uuid(row, 1, "subscription.peripheral_id"),
                     service: try bluetoothUUID(row, 2, "subscription.service_uuid"),
                     characteristic: try bluetoothUUID(row, 3, "subscription.characteristic_uuid"),
                     createdAt: Date(storedMilliseconds: row[4]))
    }

    /// `peripheral` columns in table order.
    static func peripheral(_ row: Row) throws -> PeripheralRecord {
        let address: DeviceAddress
        do {
            address = try DeviceAddress(adapter: row[1], address: row[2], addressType: enumValue(row[3], "peripheral.address_type"))
        } catch { throw StoreError.corruptRow("peripheral address") }
        let advertised: String? = row[4]
        let gap: String? = row[6]
        do {
            return try PeripheralRecord(
                id: uuid(row, 0, "peripheral.id"), address: address,
                advertisingName: advertised.map { .init($0, seenAt: Date(storedMilliseconds: row[5] ?? 0)) },
                gapName: gap.map { .init($0, seenAt: Date(storedMilliseconds: row[7] ?? 0)) },
                alias: row[8], serviceUUIDs: uuidList(row, 9, "peripheral.service_uuids"),
                lastSeenAt: date(row[10]), createdAt: Date(storedMilliseconds: row[11]))
        } catch { throw StoreError.corruptRow("peripheral: \(error)") }
    }

    /// `outbox_event` columns: identifier, seq, kind, payload, created_at.
    static func event(_ row: Row) throws -> OutboxEvent {
        OutboxEvent(identifier: try identifier(row[0]), sequence: row[1], kind: row[2], payload: row[3],
                    createdAt: Date(storedMilliseconds: row[4]))
    }
}

/// Remembers the last validated restore identifier, so that consecutive rows
/// of one identifier (the load reads them ordered by identifier) are validated once.
struct IdentifierCache {
    private var last: RestoreIdentifier?

    mutating func identifier(_ text: String) throws -> RestoreIdentifier {
        if let last, last.rawValue == text { return last }
        let value = try RowDecoding.identifier(text)
        last = value
        return value
    }
}
