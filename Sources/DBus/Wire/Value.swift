/// One D-Bus value of any type, nested to any depth.
///
/// Containers carry their element types so that empty containers keep their
/// signature. Use ``validate()`` (done for you before anything is sent) to
/// check that elements agree with the declared types.
public enum DBusValue: Hashable, Sendable {
    /// `y`: an unsigned 8-bit integer.
    case byte(UInt8)
    /// `b`: true or false.
    case boolean(Bool)
    /// `n`: a signed 16-bit integer.
    case int16(Int16)
    /// `q`: an unsigned 16-bit integer.
    case uint16(UInt16)
    /// `i`: a signed 32-bit integer.
    case int32(Int32)
    /// `u`: an unsigned 32-bit integer.
    case uint32(UInt32)
    /// `x`: a signed 64-bit integer.
    case int64(Int64)
    /// `t`: an unsigned 64-bit integer.
    case uint64(UInt64)
    /// `d`: an IEEE 754 double.
    case double(Double)
    /// A string; must not contain NUL.
    case string(String)
    /// `o`: an object path.
    case objectPath(ObjectPath)
    /// `g`: a signature.
    case signature(Signature)
    /// `h`: a Unix file descriptor (sent only where the connection can
    /// pass descriptors; see ``Connection/canPassUnixFDs``).
    case unixFD(UnixFD)
    /// An array whose elements all have the given element type.
    case array(DBusType, [DBusValue])
    /// A dictionary (`a{kv}`) with entries in wire order.
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    /// `(...)`: a structure of one or more members, in order.
    case structure([DBusValue])
    /// `v`: a value carrying its own type.
    ///
    /// The only case held in a box of its own: the others keep their
    /// payload inline (containers hold theirs in arrays), so a number or a
    /// string costs no allocation of its own.
    indirect case variant(DBusValue)

    /// One entry of a ``DBusValue/dictionary(key:value:_:)``.
    public struct DictionaryEntry: Hashable, Sendable {
        /// The key; a basic type (number, string, object path, signature, fd).
        public var key: DBusValue
        /// The value, of the dictionary's value type.
        public var value: DBusValue
        /// An entry, e.g. `.init(.string("Powered"), .variant(.boolean(true)))`.
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The type of this value.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let t, _): .array(t)
        case .dictionary(let k, let v, _): .dictionary(key: k, value: v)
        case .structure(let ms): .structure(ms.map(\.type))
        case .variant: .variant
        }
    }

    /// Checks that the value can be sent: element types match the declared
    /// container types, dictionary keys are basic, structures are not empty,
    /// strings hold no NUL, and nesting stays within D-Bus limits.
    /// - Throws: ``DBusError`` (`invalidArgs` or `invalidSignature`).
    public func validate() throws(DBusError) {
        try type.validate()
        try validateContents(depth: 0)
    }

    /// ``validate()`` without checking the type itself: for a value whose
    /// type was compared with one checked before (a declared property's).
    func validateContents(depth: Int) throws(DBusError) {
        guard depth <= 64 else { throw DBusError(.invalidArgs, "value nested deeper than 64 containers") }
        switch self {
        case .string(let s):
            if s.utf8.contains(0) { throw DBusError(.invalidArgs, "string contains a NUL byte") }
        case .array(let t, let items):
            for item in items {
                guard item.type == t else {
                    throw DBusError(.invalidArgs, "array element of type '\(item.type)' in array of '\(t)'")
                }
                try item.validateContents(depth: depth + 1)
            }
        case .dictionary(let k, let v, let entries):
            for e in entries {
                guard e.key.type == k, e.value.type == v else {
                    throw DBusError(.invalidArgs, "dictionary entry {\(e.key.type)\(e.value.type)} in a{\(k)\(v)}")
                }
                try e.key.validateContents(depth: depth + 1)
                try e.value.validateContents(depth: depth + 1)
            }
        case .structure(let ms):
            for m in ms { try m.validateContents(depth: depth + 1) }
        case .variant(let inner):
            try inner.type.validate()
            try inner.validateContents(depth: depth + 1)
        default: break
        }
    }

    /// The value inside a variant (looking through nested variants), or the
    /// value itself.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }
}

extension DBusValue {
    /// The string of a `.string`, `.objectPath` or `.signature`, else nil.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let s): s
        case .objectPath(let p): p.rawValue
        case .signature(let g): g.rawValue
        default: nil
        }
    }
}
