/// A Bluetooth UUID (service or characteristic), kept in its full 128-bit
/// form, lowercase, with dashes: `0000180d-0000-1000-8000-00805f9b34fb`.
///
/// 16-bit (`180D`) and 32-bit (`0000180D`) short forms are expanded with the
/// Bluetooth base UUID, so the same UUID always compares equal.
public struct BluetoothUUID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The canonical 36-character lowercase form.
    public let canonical: String

    /// Parses a 16-bit, 32-bit or 128-bit UUID string.
    /// - Throws: `StoreError.invalidArgument` for anything else.
    public init(_ text: String) throws(StoreError) {
        if Self.isCanonical(text) {
            canonical = text
            return
        }
        let lower = text.lowercased()
        let isHex: (Character) -> Bool = { $0.isHexDigit && $0.isASCII }
        switch lower.count {
        case 4 where lower.allSatisfy(isHex):
            canonical = "0000\(lower)-0000-1000-8000-00805f9b34fb"
        case 8 where lower.allSatisfy(isHex):
            canonical = "\(lower)-0000-1000-8000-00805f9b34fb"
        case 36:
            let groups = lower.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12], groups.allSatisfy({ $0.allSatisfy(isHex) }) else {
                throw .invalidArgument("not a Bluetooth UUID: \(text.prefix(64))")
            }
            canonical = lower
        default:
            throw .invalidArgument("not a Bluetooth UUID: \(text.prefix(64))")
        }
    }

    /// Fast check, without allocating, for the stored form (the common case when loading).
    private static func isCanonical(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count == 36 else { return false }
            for index in 0..<36 {
                let byte = bytes[index]
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    if byte != UInt8(ascii: "-") { return false }
                } else if !((byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)) {
                    return false
                }
            }
            return true
        }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(canonical)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.canonical < rhs.canonical }
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
