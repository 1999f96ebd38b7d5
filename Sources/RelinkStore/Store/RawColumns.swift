import Foundation
import GRDB
import GRDBSQLite
import RelinkModel

/// Reads the current row of a stepping statement straight from SQLite's
/// column accessors, without building GRDB `Row` values or `Data`: the
/// start-up load reads some 30,000 rows (`State/README.md`, benchmarks).
/// Valid only while the statement is on a row.
struct RawColumns {
    let statement: SQLiteStatement

    init(_ statement: Statement) { self.statement = statement.sqliteStatement }

    func isNull(_ index: CInt) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    /// An INTEGER column.
    /// - Throws: `StoreError.corruptRow` for NULL or another storage type.
    func int64(_ index: CInt) throws(StoreError) -> Int64 {
        guard sqlite3_column_type(statement, index) == SQLITE_INTEGER else { throw .corruptRow(columnName(index)) }
        return sqlite3_column_int64(statement, index)
    }

    /// An INTEGER column that may be NULL.
    /// - Throws: `StoreError.corruptRow` for another storage type.
    func optionalInt64(_ index: CInt) throws(StoreError) -> Int64? { isNull(index) ? nil : try int64(index) }

    /// A boolean stored as 0 or 1.
    /// - Throws: `StoreError.corruptRow` for anything else.
    func bool(_ index: CInt) throws(StoreError) -> Bool {
        switch try int64(index) {
        case 0: return false
        case 1: return true
        default: throw .corruptRow(columnName(index))
        }
    }

    private func columnName(_ index: CInt) -> String {
        sqlite3_column_name(statement, index).map { String(cString: $0) } ?? "column \(index)"
    }

    /// The column's bytes as text (nil for NULL or another storage type).
    func withText<T>(_ index: CInt, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        // Only TEXT: SQLite would convert a number or BLOB to text silently.
        guard sqlite3_column_type(statement, index) == SQLITE_TEXT, let pointer = sqlite3_column_text(statement, index) else { return nil }
        return try body(UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, index))))
    }

    func text(_ index: CInt) -> String? { withText(index) { String(decoding: $0, as: UTF8.self) } }

    /// The column's bytes as a BLOB (nil for NULL or another storage type).
    func withBlob<T, E: Error>(_ index: CInt, _ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T? {
        guard sqlite3_column_type(statement, index) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let pointer = sqlite3_column_blob(statement, index) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A 16-byte BLOB as a UUID.
    /// - Throws: `StoreError.corruptRow(column)` for NULL or another length.
    func uuid(_ index: CInt, _ column: String) throws(StoreError) -> UUID {
        let value: UUID?? = withBlob(index) { bytes in bytes.count == 16 ? UUID(storedBlob: bytes) : nil }
        guard let value = value ?? nil else { throw .corruptRow(column) }
        return value
    }

    /// A 16-byte BLOB as a Bluetooth UUID.
    /// - Throws: `StoreError.corruptRow(column)` for NULL or another length.
    func bluetoothUUID(_ index: CInt, _ column: String) throws(StoreError) -> BluetoothUUID {
        let value: BluetoothUUID?? = withBlob(index) { bytes in bytes.count == 16 ? BluetoothUUID(bytes: bytes) : nil }
        guard let value = value ?? nil else { throw .corruptRow(column) }
        return value
    }

    /// A BLOB of 16-byte UUIDs.
    /// - Throws: `StoreError.corruptRow` for NULL or a length not a multiple of 16.
    func uuidList(_ index: CInt, _ column: String) throws(StoreError) -> [BluetoothUUID] {
        let list: [BluetoothUUID]?? = try withBlob(index) { bytes throws(StoreError) in try [BluetoothUUID].fromStoredList(bytes, column: column) }
        guard let list = list ?? nil else { throw .corruptRow("bad UUID list in \(column)") }
        return list
    }

    /// A BLOB of 16-byte peripheral identifiers.
    /// - Throws: `StoreError.corruptRow` for NULL or a length not a multiple of 16.
    func peripheralList(_ index: CInt, _ column: String) throws(StoreError) -> [PeripheralID] {
        let list: [PeripheralID]?? = try withBlob(index) { bytes throws(StoreError) in try [PeripheralID].fromStoredList(bytes, column: column) }
        guard let list = list ?? nil else { throw .corruptRow("bad peripheral list in \(column)") }
        return list
    }

    /// A text column that must be one of an enumeration's raw values.
    /// - Throws: `StoreError.corruptRow(column)` otherwise (NULL included).
    func enumValue<E: RawRepresentable<String> & CaseIterable>(_ index: CInt, _ column: String) throws(StoreError) -> E {
        let found: E?? = withText(index) { bytes in
            E.allCases.first { Self.equal($0.rawValue, bytes) }
        }
        guard let value = found ?? nil else { throw .corruptRow(column) }
        return value
    }

    /// Whether a text column holds exactly `text`'s bytes.
    func textEquals(_ index: CInt, _ text: String) -> Bool {
        withText(index) { bytes in Self.equal(text, bytes) } ?? false
    }

    /// Byte equality of a (native, contiguous) string and a buffer, by memcmp.
    static func equal(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == bytes.count else { return false }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        return utf8.withContiguousStorageIfAvailable { mine in
            guard let other = mine.baseAddress else { return true }
            return memcmp(other, base, bytes.count) == 0
        } ?? utf8.elementsEqual(bytes)
    }
}
