/// A validated D-Bus signature: zero or more complete types, e.g. `sa{sv}`.
///
/// Constructing one from a string checks every rule of the D-Bus
/// specification (libdbus aborts the process on an invalid signature, so
/// nothing unvalidated reaches it).
public struct Signature: Hashable, Sendable, CustomStringConvertible {
    /// The signature text.
    public let rawValue: String
    /// The complete types, in order.
    public let types: [DBusType]

    /// Parses and validates a signature.
    /// - Throws: ``DBusError`` named ``DBusError/Name/invalidSignature`` when
    ///   `string` is not a valid signature (unknown code, unbalanced
    ///   brackets, non-basic dictionary key, nesting deeper than 32, longer
    ///   than 255 bytes, interior NUL).
    public init(_ string: String) throws(DBusError) {
        let bytes = Array(string.utf8)
        guard bytes.count <= 255 else { throw DBusError(.invalidSignature, "signature longer than 255 bytes") }
        var parser = Parser(bytes: bytes)
        var types: [DBusType] = []
        while parser.index < bytes.count {
            types.append(try parser.parseComplete(arrays: 0, structs: 0))
        }
        self.rawValue = string
        self.types = types
    }

    /// A signature made of the given types.
    /// - Throws: ``DBusError`` (`invalidSignature`) when a type breaks a rule
    ///   or the result is longer than 255 bytes.
    public init(types: [DBusType]) throws(DBusError) {
        for t in types { try t.validate() }
        var s = ""
        for t in types { t.append(to: &s) }
        guard s.utf8.count <= 255 else { throw DBusError(.invalidSignature, "signature longer than 255 bytes") }
        self.rawValue = s
        self.types = types
    }

    /// Internal: trusted text and types that are known to agree.
    init(trusted rawValue: String, types: [DBusType]) {
        self.rawValue = rawValue
        self.types = types
    }

    /// The empty signature.
    public static let empty = Signature(trusted: "", types: [])

    /// The signature text.
    public var description: String { rawValue }

    /// Whether the signature holds exactly one complete type.
    public var isSingleCompleteType: Bool { types.count == 1 }

    /// Equal when the texts are equal (the types follow from the text).
    public static func == (a: Signature, b: Signature) -> Bool { a.rawValue == b.rawValue }
    /// Hashes the text, consistent with `==`.
    public func hash(into h: inout Hasher) { h.combine(rawValue) }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func next() throws(DBusError) -> UInt8 {
            guard index < bytes.count else { throw DBusError(.invalidSignature, "signature ends inside a container") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func parseComplete(arrays: Int, structs: Int) throws(DBusError) -> DBusType {
            let c = try next()
            switch c {
            case UInt8(ascii: "y"): return .byte
            case UInt8(ascii: "b"): return .boolean
            case UInt8(ascii: "n"): return .int16
            case UInt8(ascii: "q"): return .uint16
            case UInt8(ascii: "i"): return .int32
            case UInt8(ascii: "u"): return .uint32
            case UInt8(ascii: "x"): return .int64
            case UInt8(ascii: "t"): return .uint64
            case UInt8(ascii: "d"): return .double
            case UInt8(ascii: "s"): return .string
            case UInt8(ascii: "o"): return .objectPath
            case UInt8(ascii: "g"): return .signature
            case UInt8(ascii: "h"): return .unixFD
            case UInt8(ascii: "v"): return .variant
            case UInt8(ascii: "a"):
                guard arrays < 32 else { throw DBusError(.invalidSignature, "more than 32 nested arrays") }
                if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                    index += 1
                    guard structs < 32 else { throw DBusError(.invalidSignature, "more than 32 nested structures") }
                    let key = try parseComplete(arrays: arrays + 1, structs: structs + 1)
                    guard key.isBasic else { throw DBusError(.invalidSignature, "dictionary key '\(key)' is not a basic type") }
                    let value = try parseComplete(arrays: arrays + 1, structs: structs + 1)
                    guard try next() == UInt8(ascii: "}") else {
                        throw DBusError(.invalidSignature, "dictionary entry must have exactly two types")
                    }
                    return .dictionary(key: key, value: value)
                }
                return .array(try parseComplete(arrays: arrays + 1, structs: structs))
            case UInt8(ascii: "("):
                guard structs < 32 else { throw DBusError(.invalidSignature, "more than 32 nested structures") }
                var members: [DBusType] = []
                while true {
                    guard index < bytes.count else { throw DBusError(.invalidSignature, "unclosed structure") }
                    if bytes[index] == UInt8(ascii: ")") { index += 1; break }
                    members.append(try parseComplete(arrays: arrays, structs: structs + 1))
                }
                guard !members.isEmpty else { throw DBusError(.invalidSignature, "empty structure") }
                return .structure(members)
            default:
                throw DBusError(.invalidSignature, "invalid type code '\(Unicode.Scalar(c))' at \(index - 1)")
            }
        }
    }
}
