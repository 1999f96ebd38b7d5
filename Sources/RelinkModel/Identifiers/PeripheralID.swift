#if canImport(FoundationEssentials)
public import struct FoundationEssentials.UUID
#else
public import struct Foundation.UUID
#endif

/// relink's stable identifier for a peripheral (like `CBPeripheral.identifier`).
///
/// It is assigned the first time relink sees a device and kept in the store,
/// mapped to adapter + address + address type; it does not change when BlueZ
/// forgets the device or when the device's address is re-learned by a scan.
public struct PeripheralID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    /// A fresh random identifier.
    public init() { self.uuid = UUID() }

    /// Parses the textual form of a UUID.
    /// - Throws: ``DomainError/invalidPeripheralID(_:)`` when `string` is not a UUID.
    public init(parsing string: String) throws(DomainError) {
        guard let uuid = UUID(uuidString: string) else { throw .invalidPeripheralID(string) }
        self.uuid = uuid
    }

    /// `uuid.uuidString` (upper-case hex, 8-4-4-4-12), written here without
    /// the `snprintf` Foundation formats it with: journal lines, object
    /// paths and sorts ask for it many times per intent at start-up.
    public var description: String { text(lowercase: false, separator: UInt8(ascii: "-")) }

    /// The 16 bytes as 8-4-4-4-12 hex digits, upper- or lower-case, the
    /// groups joined by `separator` (an ASCII byte): ``description`` and
    /// the `Peripheral1` object path's element (lower-case, `_`).
    public func text(lowercase: Bool, separator: UInt8) -> String {
        let hex: StaticString = lowercase ? "0123456789abcdef" : "0123456789ABCDEF"
        return withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                hex.withUTF8Buffer { digits in
                    var at = 0
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 { out[at] = separator; at += 1 }
                        out[at] = digits[Int(byte >> 4)]
                        out[at + 1] = digits[Int(byte & 0x0F)]
                        at += 2
                    }
                    return at
                }
            }
        }
    }

    /// The order of ``description``s (fixed-width upper-case hex, dashes at
    /// the same places), taken on the 16 bytes instead of two formatted
    /// strings per comparison.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        withUnsafeBytes(of: lhs.uuid.uuid) { l in
            withUnsafeBytes(of: rhs.uuid.uuid) { r in l.lexicographicallyPrecedes(r) }
        }
    }
}
