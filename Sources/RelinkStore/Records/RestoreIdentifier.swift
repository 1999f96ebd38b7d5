/// A validated restore identifier: the name a client gives its central
/// manager (like CoreBluetooth's `CBCentralManagerOptionRestoreIdentifierKey`).
///
/// Rules: 1 to 128 characters, ASCII letters, digits, `.`, `_`, `-`, `:`;
/// the first character is a letter or a digit. The rules keep identifiers
/// safe as D-Bus object path components (after escaping) and as log fields.
public struct RestoreIdentifier: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The longest identifier accepted, in characters.
    public static let maximumLength = 128

    /// The identifier's text, exactly as validated.
    public let rawValue: String

    /// Validates `rawValue`.
    /// - Throws: `StoreError.invalidArgument` when the text breaks the rules above.
    public init(_ rawValue: String) throws(StoreError) {
        let bytes = rawValue.utf8
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else {
            throw .invalidArgument("restore identifier must be 1 to \(Self.maximumLength) characters, got \(rawValue.count)")
        }
        var text = rawValue
        let badIndex: Int? = text.withUTF8 { bytes in
            for index in 0..<bytes.count {
                let byte = bytes[index]
                let isAlnum = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                let isPunct = byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
                if !(isAlnum || (index > 0 && isPunct)) { return index }
            }
            return nil
        }
        if let badIndex {
            throw .invalidArgument("restore identifier has a character not allowed at byte \(badIndex): only letters, digits and . _ - : (not first) are allowed")
        }
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}
