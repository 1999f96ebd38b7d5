/// The name under which a client's state is kept, as CoreBluetooth's
/// `CBCentralManagerOptionRestoreIdentifierKey`.
///
/// Rules (checked by ``init(_:)``, the one validation every layer uses): 1 to
/// ``maximumLength`` bytes, each an ASCII letter, digit, or one of `. _ - :`,
/// the first a letter or a digit. The rules keep identifiers safe as D-Bus
/// object path elements (after escaping), journal field values and SQL keys.
public struct RestoreIdentifier: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The validated identifier.
    public let rawValue: String

    /// The longest identifier accepted, in bytes (all of them ASCII).
    public static let maximumLength = 128

    /// Validates `rawValue`.
    /// - Throws: ``DomainError/invalidRestoreIdentifier(_:reason:)`` when it is
    ///   empty, longer than ``maximumLength``, starts with punctuation or has a
    ///   disallowed character.
    public init(_ rawValue: String) throws(DomainError) {
        let count = rawValue.utf8.count
        if count == 0 {
            throw .invalidRestoreIdentifier(rawValue, reason: "empty")
        }
        if count > Self.maximumLength {
            throw .invalidRestoreIdentifier(rawValue, reason: "longer than \(Self.maximumLength) bytes (\(count))")
        }
        var text = rawValue
        let bad: (index: Int, byte: UInt8)? = text.withUTF8 { bytes in
            for index in 0..<bytes.count {
                let byte = bytes[index]
                let isAlnum = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                let isPunct = byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
                if !(isAlnum || (index > 0 && isPunct)) { return (index, byte) }
            }
            return nil
        }
        if let bad {
            let reason = bad.index == 0 && bad.byte < 0x80
                ? "must start with a letter or a digit"
                : "character at byte \(bad.index) not allowed (use A-Z a-z 0-9 . _ - :)"
            throw .invalidRestoreIdentifier(rawValue, reason: reason)
        }
        self.rawValue = rawValue
    }

    /// The identifier's text.
    public var description: String { rawValue }

    /// Ordered by text (byte order, as the store keys them).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Decodes and validates the identifier's text.
    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        try self.init(raw)
    }

    /// Encodes the identifier's text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
