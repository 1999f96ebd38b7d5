/// A Bluetooth UUID, always held in its 128-bit form.
///
/// 16- and 32-bit short forms are expanded over the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`, so `"180D"`, `"0000180d"` and
/// `"0000180d-0000-1000-8000-00805f9b34fb"` are equal. The textual form is
/// BlueZ's: lower-case, 8-4-4-4-12.
public struct BluetoothUUID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The 128-bit value, most significant first.
    public let high: UInt64
    public let low: UInt64

    /// The Base UUID's low 96 bits (everything except the top 32).
    private static let baseHighLow32: UInt64 = 0x0000_1000
    private static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// A 16- or 32-bit assigned number expanded over the Base UUID.
    public init(shortValue: UInt32) {
        self.high = (UInt64(shortValue) << 32) | Self.baseHighLow32
        self.low = Self.baseLow
    }

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses 4 or 8 hex digits (short forms) or 32 hex digits with or without
    /// the 8-4-4-4-12 dashes; either case.
    /// - Throws: ``DomainError/invalidBluetoothUUID(_:)`` for any other text.
    public init(parsing string: String) throws(DomainError) {
        let digits: Substring
        if string.count == 36 {
            let dashOffsets: Set<Int> = [8, 13, 18, 23]
            for (offset, character) in string.enumerated() {
                if dashOffsets.contains(offset) != (character == "-") { throw .invalidBluetoothUUID(string) }
            }
            digits = Substring(string.filter { $0 != "-" })
        } else {
            digits = Substring(string)
        }
        guard digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { throw .invalidBluetoothUUID(string) }
        switch digits.count {
        case 4, 8:
            guard let value = UInt32(digits, radix: 16) else { throw .invalidBluetoothUUID(string) }
            self.init(shortValue: value)
        case 32:
            guard let high = UInt64(digits.prefix(16), radix: 16),
                  let low = UInt64(digits.suffix(16), radix: 16)
            else { throw .invalidBluetoothUUID(string) }
            self.init(high: high, low: low)
        default:
            throw .invalidBluetoothUUID(string)
        }
    }

    /// The 16- or 32-bit assigned number when this UUID lies on the Base UUID.
    public var shortValue: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32 else { return nil }
        return UInt32(high >> 32)
    }

    /// Lower-case 8-4-4-4-12 form, as BlueZ prints UUIDs.
    public var string: String {
        let hex = Self.hex(high, width: 16) + Self.hex(low, width: 16)
        var result = ""
        for (offset, character) in hex.enumerated() {
            if offset == 8 || offset == 12 || offset == 16 || offset == 20 { result.append("-") }
            result.append(character)
        }
        return result
    }

    private static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: width - digits.count) + digits
    }

    public var description: String { string }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    public init(from decoder: any Decoder) throws {
        try self.init(parsing: decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}
