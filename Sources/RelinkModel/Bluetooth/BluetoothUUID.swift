/// A Bluetooth UUID, always held in its 128-bit form.
///
/// 16- and 32-bit short forms are expanded over the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`, so `"180D"`, `"0000180d"` and
/// `"0000180d-0000-1000-8000-00805f9b34fb"` are equal. The textual form is
/// BlueZ's: lower-case, 8-4-4-4-12.
public struct BluetoothUUID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The top 64 bits of the 128-bit value.
    public let high: UInt64
    /// The low 64 bits of the 128-bit value.
    public let low: UInt64

    /// The Base UUID's low 96 bits (everything except the top 32).
    private static let baseHighLow32: UInt64 = 0x0000_1000
    private static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// A 16- or 32-bit assigned number expanded over the Base UUID.
    public init(shortValue: UInt32) {
        self.high = (UInt64(shortValue) << 32) | Self.baseHighLow32
        self.low = Self.baseLow
    }

    /// The UUID with these 128 bits.
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

    /// Reads 16 bytes, most significant first, at `offset`; nil when fewer are there.
    public init?(bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        guard offset >= 0, bytes.count >= offset + 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(bytes[offset + index])
            low = low << 8 | UInt64(bytes[offset + 8 + index])
        }
        self.init(high: high, low: low)
    }

    /// The 16 bytes, most significant first (the order of the text form).
    public var bytes: [UInt8] {
        (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> (56 - 8 * UInt64(index % 8))) }
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
