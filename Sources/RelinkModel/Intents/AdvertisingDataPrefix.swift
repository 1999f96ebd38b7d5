/// A scan filter or match-rule criterion on advertising data: the
/// manufacturer data of a company, or the service data of a service, that
/// starts with ``bytes`` (compared under ``mask`` when one is given).
///
/// The rule: an advertisement matches when it carries data for ``field``,
/// at least ``bytes``'s count long, and for each index `i` of ``bytes``,
/// `data[i] & mask[i] == bytes[i] & mask[i]` (no mask: every bit counts).
/// A prefix longer than the data does not match; empty ``bytes`` match any
/// data of the field (the company or service is present).
///
/// A prefix longer than any advertisement can carry for its field is
/// refused (``maximumLength(for:)``), as is a mask whose length differs
/// from the prefix's.
///
/// Text form (``text``, ``init(parsing:)``): `manufacturer:<company>:<hex>[/<mask>]`
/// or `service:<uuid>:<hex>[/<mask>]`, e.g. `manufacturer:0x004c:0215` (an
/// iBeacon), `service:feaa:10` (an Eddystone-URL frame); the company is 1
/// to 4 hex digits with or without `0x`.
public struct AdvertisingDataPrefix: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// Which advertised data a prefix applies to.
    public enum Field: Sendable, Hashable, Codable {
        /// Manufacturer-specific data of a company identifier.
        case manufacturer(UInt16)
        /// Service data of a service.
        case service(BluetoothUUID)

        /// The text form's first part.
        public var kind: Kind {
            switch self {
            case .manufacturer: .manufacturer
            case .service: .service
            }
        }
    }

    /// The two kinds of data a prefix applies to, by their text names.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// `manufacturer`: manufacturer-specific data.
        case manufacturer
        /// `service`: service data.
        case service
    }

    /// The data the prefix applies to.
    public let field: Field
    /// The bytes the data starts with.
    public let bytes: [UInt8]
    /// The bits of ``bytes`` that count, as long as ``bytes``; nil: all.
    public let mask: [UInt8]?

    /// The longest data one AD structure carries: its length is one octet,
    /// counting the AD type's octet (Core Specification, Vol 3, Part C,
    /// 11). Legacy advertising (31 octets in all) carries less; extended
    /// advertising carries a whole structure.
    public static let maximumStructureData = 254

    /// The longest prefix a field can have: an AD structure's data less
    /// the company ID (2 octets) or the service UUID (2, 4 or 16 octets as
    /// it is a 16-bit, 32-bit or other UUID): 252 for manufacturer data,
    /// 252, 250 or 238 for service data.
    public static func maximumLength(for field: Field) -> Int {
        switch field {
        case .manufacturer:
            return maximumStructureData - 2
        case .service(let uuid):
            guard let short = uuid.shortValue else { return maximumStructureData - 16 }
            return maximumStructureData - (short <= 0xFFFF ? 2 : 4)
        }
    }

    /// A prefix.
    /// - Throws: ``DomainError/invalidDataPrefix(_:)`` when `bytes` is longer
    ///   than ``maximumLength(for:)`` or `mask` is not as long as `bytes`.
    public init(_ field: Field, bytes: [UInt8], mask: [UInt8]? = nil) throws(DomainError) {
        let limit = Self.maximumLength(for: field)
        guard bytes.count <= limit else {
            throw .invalidDataPrefix("a \(field.kind.rawValue) data prefix of \(bytes.count) bytes is longer than any advertisement carries (at most \(limit))")
        }
        if let mask, mask.count != bytes.count {
            throw .invalidDataPrefix("the mask has \(mask.count) bytes, the prefix \(bytes.count): they must be as long")
        }
        self.field = field
        self.bytes = bytes
        self.mask = mask
    }

    /// Parses the text form (`manufacturer:0x004c:0215/ffff`, `service:180d:01`).
    /// - Throws: ``DomainError/invalidDataPrefix(_:)``.
    public init(parsing text: String) throws(DomainError) {
        guard let colon = text.firstIndex(of: ":"), let kind = Kind(rawValue: String(text[..<colon])) else {
            throw .invalidDataPrefix("\(DomainError.echo(text)): expected manufacturer:<company>:<hex>[/<mask>] or service:<uuid>:<hex>[/<mask>]")
        }
        try self.init(parsing: String(text[text.index(after: colon)...]), as: kind)
    }

    /// Parses `<company>:<hex>[/<mask>]` (manufacturer) or
    /// `<uuid>:<hex>[/<mask>]` (service), the text form without its kind.
    /// The data part may be empty (`0x004c:`, or just `0x004c`).
    /// - Throws: ``DomainError/invalidDataPrefix(_:)``.
    public init(parsing text: String, as kind: Kind) throws(DomainError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let key = parts[0], rest = parts.count > 1 ? parts[1] : ""
        let field: Field
        switch kind {
        case .manufacturer:
            var digits = key
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
            guard (1...4).contains(digits.count), let company = UInt16(digits, radix: 16) else {
                throw .invalidDataPrefix("\(DomainError.echo(String(key))): a company ID is 1 to 4 hex digits, like 0x004c")
            }
            field = .manufacturer(company)
        case .service:
            do { field = .service(try BluetoothUUID(parsing: String(key))) } catch {
                throw .invalidDataPrefix("\(error)")
            }
        }
        let halves = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = HexBytes.parse(halves[0]) else {
            throw .invalidDataPrefix("\(DomainError.echo(String(halves[0]))) is not hex bytes")
        }
        var mask: [UInt8]?
        if halves.count > 1 {
            guard let parsed = HexBytes.parse(halves[1]) else {
                throw .invalidDataPrefix("mask \(DomainError.echo(String(halves[1]))) is not hex bytes")
            }
            mask = parsed
        }
        try self.init(field, bytes: bytes, mask: mask)
    }

    /// The text form without the kind (`0x004c:0215/ffff`, `0000180d-…:01`).
    public var valueText: String {
        let key = switch field {
        case .manufacturer(let company): "0x" + HexBytes.string([UInt8(company >> 8), UInt8(company & 0xFF)])
        case .service(let uuid): uuid.string
        }
        return key + ":" + HexBytes.string(bytes) + (mask.map { "/" + HexBytes.string($0) } ?? "")
    }

    /// The text form, `kind:` then ``valueText``; ``init(parsing:)`` reads it back.
    public var text: String { field.kind.rawValue + ":" + valueText }

    /// ``text``.
    public var description: String { text }

    /// Orders by text (for stable stored and shown lists).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.text < rhs.text }

    /// Whether `data` starts with the prefix (under the mask).
    public func matches(_ data: [UInt8]) -> Bool {
        guard data.count >= bytes.count else { return false }
        for index in bytes.indices {
            let bits = mask?[index] ?? 0xFF
            if data[index] & bits != bytes[index] & bits { return false }
        }
        return true
    }

    /// Whether the advertising data carries data for ``field`` that starts
    /// with the prefix.
    public func matches(_ data: AdvertisingData) -> Bool {
        let value = switch field {
        case .manufacturer(let company): data.manufacturerData[company]
        case .service(let uuid): data.serviceData[uuid]
        }
        guard let value else { return false }
        return matches(value)
    }
}
