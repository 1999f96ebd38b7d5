import Foundation

/// A Bluetooth UUID (service or characteristic), kept as its 128-bit value
/// and written in its canonical form: lowercase, with dashes,
/// `0000180d-0000-1000-8000-00805f9b34fb`.
///
/// 16-bit (`180D`) and 32-bit (`0000180D`) short forms are expanded with the
/// Bluetooth base UUID, so the same UUID always compares equal. Ordering is
/// that of the canonical text (byte order of the value).
public struct BluetoothUUID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    private let value: UUID

    /// The canonical 36-character lowercase form.
    public var canonical: String { value.uuidString.lowercased() }

    /// Parses a 16-bit, 32-bit or 128-bit UUID string.
    /// - Throws: `StoreError.invalidArgument` for anything else.
    public init(_ text: String) throws(StoreError) {
        let utf8Count = text.utf8.count
        let full: String
        switch utf8Count {
        case 4: full = "0000\(text)-0000-1000-8000-00805f9b34fb"
        case 8: full = "\(text)-0000-1000-8000-00805f9b34fb"
        case 36: full = text
        default: throw .invalidArgument("not a Bluetooth UUID: \(text.prefix(64))")
        }
        guard let value = UUID(storedText: full) else { throw .invalidArgument("not a Bluetooth UUID: \(text.prefix(64))") }
        self.value = value
    }

    init(value: UUID) { self.value = value }

    /// The stored form: 16 bytes.
    var storedBlob: Data { value.storedBlob }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(canonical)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        withUnsafeBytes(of: lhs.value.uuid) { l in
            withUnsafeBytes(of: rhs.value.uuid) { r in l.lexicographicallyPrecedes(r) }
        }
    }

    public var description: String { canonical }
}

extension [BluetoothUUID] {
    /// The stored form of a UUID list: the 16-byte values, concatenated.
    var storedList: Data {
        var data = Data(capacity: count * 16)
        for uuid in self { data.append(uuid.storedBlob) }
        return data
    }

    /// Parses the stored form; throws `StoreError.corruptRow` when its length is not a multiple of 16.
    static func fromStoredList(_ data: UnsafeRawBufferPointer, column: String) throws(StoreError) -> [BluetoothUUID] {
        guard data.count % 16 == 0 else { throw .corruptRow("bad UUID list in \(column)") }
        var result: [BluetoothUUID] = []
        result.reserveCapacity(data.count / 16)
        var offset = 0
        while offset < data.count, let value = UUID(storedBlob: data, offset: offset) {
            result.append(BluetoothUUID(value: value))
            offset += 16
        }
        return result
    }
}
