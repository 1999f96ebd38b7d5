/// The name under which a client's central state is kept, as CoreBluetooth's
/// `CBCentralManagerOptionRestoreIdentifierKey`.
///
/// Rules (checked by ``init(_:)``): 1 to 255 characters, each an ASCII letter,
/// digit, or one of `. _ - :`. The rules keep identifiers safe as D-Bus object
/// path elements (after escaping), journal field values and SQL keys.
public struct RestoreIdentifier: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The validated identifier.
    public let rawValue: String

    /// The longest identifier accepted.
    public static let maximumLength = 255

    /// Validates `rawValue`.
    /// - Throws: ``DomainError/invalidRestoreIdentifier(_:reason:)`` when it is
    ///   empty, longer than ``maximumLength`` or has a disallowed character.
    public init(_ rawValue: String) throws(DomainError) {
        if rawValue.isEmpty {
            throw .invalidRestoreIdentifier(rawValue, reason: "empty")
        }
        if rawValue.utf8.count > Self.maximumLength {
            throw .invalidRestoreIdentifier(rawValue, reason: "longer than \(Self.maximumLength) bytes")
        }
        for scalar in rawValue.unicodeScalars where !Self.isAllowed(scalar) {
            throw .invalidRestoreIdentifier(rawValue, reason: "character \(String(scalar).debugDescription) not allowed (use A-Z a-z 0-9 . _ - :)")
        }
        self.rawValue = rawValue
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-", ":": true
        default: false
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        try self.init(raw)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
