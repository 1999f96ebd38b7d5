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
        let scalars = rawValue.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= Self.maximumLength else {
            throw .invalidArgument("restore identifier must be 1 to \(Self.maximumLength) characters, got \(scalars.count)")
        }
        for (index, scalar) in scalars.enumerated() {
            let isAlnum = scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar))
            let isPunct = scalar == "." || scalar == "_" || scalar == "-" || scalar == ":"
            guard isAlnum || (index > 0 && isPunct) else {
                throw .invalidArgument("restore identifier has a character not allowed at position \(index): only letters, digits and . _ - : (not first) are allowed")
            }
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
