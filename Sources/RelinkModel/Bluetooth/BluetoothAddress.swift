/// A 48-bit Bluetooth device address with its LE address type.
///
/// Textual form is BlueZ's: six upper-case hex octets, most significant first,
/// separated by colons (`AA:BB:CC:DD:EE:FF`). Parsing accepts either case.
public struct BluetoothAddress: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// LE address type, as BlueZ's `Device1.AddressType`.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case `public`
        case random

        /// Parses BlueZ's spelling ("public" or "random").
        /// - Throws: ``DomainError/invalidAddressType(_:)`` for anything else.
        public init(parsing string: String) throws(DomainError) {
            guard let kind = Kind(rawValue: string) else { throw .invalidAddressType(string) }
            self = kind
        }
    }

    /// The six octets, most significant first.
    public let octets: [UInt8]
    public let kind: Kind

    /// Builds an address from six octets (most significant first).
    /// - Throws: ``DomainError/invalidAddress(_:)`` unless there are exactly six.
    public init(octets: [UInt8], kind: Kind = .public) throws(DomainError) {
        guard octets.count == 6 else {
            throw .invalidAddress(octets.map { String($0, radix: 16) }.joined(separator: ":"))
        }
        self.octets = octets
        self.kind = kind
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case).
    /// - Throws: ``DomainError/invalidAddress(_:)`` unless `string` is six
    ///   colon-separated two-digit hex octets.
    public init(parsing string: String, kind: Kind = .public) throws(DomainError) {
        // By UTF-8 byte: a store of 10,000 peripherals parses 10,000 at
        // start-up, and splitting into Characters cost 5 us each.
        let utf8 = string.utf8
        guard utf8.count == 17 else { throw .invalidAddress(string) }
        var octets: [UInt8] = []
        octets.reserveCapacity(6)
        var octet: UInt8 = 0
        for (i, byte) in utf8.enumerated() {
            if i % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { throw .invalidAddress(string) }
                continue
            }
            guard let digit = Self.hexDigit(byte) else { throw .invalidAddress(string) }
            octet = i % 3 == 0 ? digit << 4 : octet | digit
            if i % 3 == 1 { octets.append(octet) }
        }
        self.octets = octets
        self.kind = kind
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// For random addresses, the sub-type given by the two top bits
    /// (Core spec Vol 6 Part B 1.3): `nil` for public addresses.
    public var randomSubtype: RandomSubtype? {
        guard kind == .random, let first = octets.first else { return nil }
        switch first >> 6 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    /// Sub-types of random addresses. Private ones change over time, so a
    /// stored private address can stop matching: the scan strategy's match
    /// rule then has to find the device by its advertisement instead.
    public enum RandomSubtype: Sendable, Hashable {
        case staticAddress, resolvablePrivate, nonResolvablePrivate, reserved
    }

    /// True when the address can change without notice (private random).
    public var isRotating: Bool {
        switch randomSubtype {
        case .resolvablePrivate, .nonResolvablePrivate: true
        default: false
        }
    }

    /// `AA:BB:CC:DD:EE:FF`.
    public var string: String {
        // Written byte by byte: relinkd looks peripherals up by this text
        // for every notified value.
        String(unsafeUninitializedCapacity: max(0, octets.count * 3 - 1)) { text in
            var i = 0
            for (n, octet) in octets.enumerated() {
                if n > 0 {
                    text[i] = UInt8(ascii: ":")
                    i += 1
                }
                text[i] = Self.hexDigit(octet >> 4)
                text[i + 1] = Self.hexDigit(octet & 0x0F)
                i += 2
            }
            return i
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    public var description: String { kind == .public ? string : "\(string) (random)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.octets.lexicographicallyPrecedes(rhs.octets) || (lhs.octets == rhs.octets && lhs.kind == .public && rhs.kind == .random)
    }

    private enum CodingKeys: String, CodingKey { case address, type }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try Kind(parsing: container.decode(String.self, forKey: .type))
        try self.init(parsing: container.decode(String.self, forKey: .address), kind: kind)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(string, forKey: .address)
        try container.encode(kind.rawValue, forKey: .type)
    }
}
