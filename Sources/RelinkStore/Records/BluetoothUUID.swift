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
    /// The stored form of a UUID list: canonical UUIDs separated by single spaces.
    var storedList: String { map(\.canonical).joined(separator: " ") }

    /// Parses the stored form; throws `StoreError.corruptRow` on a bad entry.
    static func fromStoredList(_ text: String, column: String) throws(StoreError) -> [BluetoothUUID] {
        var result: [BluetoothUUID] = []
        // Split on bytes, not Characters: this runs for every peripheral on load.
        for part in text.utf8.split(separator: UInt8(ascii: " ")) {
            do { result.append(try BluetoothUUID(String(decoding: part, as: UTF8.self))) } catch { throw .corruptRow("bad UUID in \(column)") }
        }
        return result
    }
}
