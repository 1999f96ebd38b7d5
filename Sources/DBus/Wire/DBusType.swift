/// The type of a D-Bus value, as a tree (the parsed form of one complete
/// type in a ``Signature``).
///
/// Only well-formed types can be built from the cases, except for two rules
/// checked by ``validate()`` (and by ``Signature/init(_:)``): a dictionary key
/// must be a basic type, and a structure must have at least one member.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    /// The fixed-size basic types: `y b n q i u x t d`.
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    /// The other basic types: `s o g h`.
    case string, objectPath, signature, unixFD
    /// `v`: any single complete type, carried with its value.
    case variant
    /// `a` followed by the element type.
    case array(DBusType)
    /// `a{kv}`: an array of dictionary entries.
    case dictionary(key: DBusType, value: DBusType)
    /// `(...)`: one or more member types, in order.
    case structure([DBusType])

    /// The D-Bus signature of this single complete type, e.g. `a{sv}`.
    public var signature: String {
        var s = ""
        append(to: &s)
        return s
    }

    /// The signature of the type, e.g. `a{sv}`.
    public var description: String { signature }

    func append(to s: inout String) {
        switch self {
        case .array(let e): s.append("a"); e.append(to: &s)
        case .dictionary(let k, let v): s.append("a{"); k.append(to: &s); v.append(to: &s); s.append("}")
        case .structure(let ms): s.append("("); for m in ms { m.append(to: &s) }; s.append(")")
        default: s.append(Character(Unicode.Scalar(UInt8(typeCode))))
        }
    }

    /// Basic types can be dictionary keys.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// The libdbus type code (`DBUS_TYPE_*`) of the outermost type.
    var typeCode: Int32 {
        switch self {
        case .byte: 121  // y
        case .boolean: 98  // b
        case .int16: 110  // n
        case .uint16: 113  // q
        case .int32: 105  // i
        case .uint32: 117  // u
        case .int64: 120  // x
        case .uint64: 116  // t
        case .double: 100  // d
        case .string: 115  // s
        case .objectPath: 111  // o
        case .signature: 103  // g
        case .unixFD: 104  // h
        case .variant: 118  // v
        case .array, .dictionary: 97  // a
        case .structure: 114  // r
        }
    }

    /// Checks the rules the cases cannot express, and the nesting limits
    /// (32 arrays, 32 structures).
    /// - Throws: ``DBusError/invalidSignature`` when the type is not allowed.
    public func validate() throws(DBusError) {
        try validate(arrays: 0, structs: 0)
        if signature.utf8.count > 255 {
            throw DBusError(.invalidSignature, "signature longer than 255 bytes")
        }
    }

    private func validate(arrays: Int, structs: Int) throws(DBusError) {
        switch self {
        case .array(let e):
            guard arrays < 32 else { throw DBusError(.invalidSignature, "more than 32 nested arrays") }
            try e.validate(arrays: arrays + 1, structs: structs)
        case .dictionary(let k, let v):
            guard arrays < 32, structs < 32 else { throw DBusError(.invalidSignature, "nesting too deep") }
            guard k.isBasic else { throw DBusError(.invalidSignature, "dictionary key '\(k)' is not a basic type") }
            try v.validate(arrays: arrays + 1, structs: structs + 1)
        case .structure(let ms):
            guard !ms.isEmpty else { throw DBusError(.invalidSignature, "empty structure") }
            guard structs < 32 else { throw DBusError(.invalidSignature, "more than 32 nested structures") }
            for m in ms { try m.validate(arrays: arrays, structs: structs + 1) }
        default: break
        }
    }
}
