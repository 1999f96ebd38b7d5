import Foundation
import GRDB

/// Decoding of single stored rows read through GRDB (events, one
/// peripheral) into records; the start-up load decodes its rows with
/// ``RawColumns`` instead. A value the schema's CHECKs should have
/// prevented raises `StoreError.corruptRow`.
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

    static let defaultStrategyText = ConnectionIntent.defaultStrategies.map(\.rawValue).joined(separator: ",")

    /// Parses a comma-separated strategy list (the default order without splitting).
    static func strategyList(_ text: String) throws -> [ConnectionIntent.Strategy] {
        if text == defaultStrategyText { return ConnectionIntent.defaultStrategies }
        return try text.utf8.split(separator: UInt8(ascii: ",")).map {
            try enumValue(String(decoding: $0, as: UTF8.self), "connection_intent.strategies")
        }
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
