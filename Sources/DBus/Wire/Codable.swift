/// A Swift type with a fixed D-Bus type that can be turned into a
/// ``DBusValue``.
public protocol DBusEncodable: Sendable {
    /// The D-Bus type of every value of this Swift type.
    static var dbusType: DBusType { get }
    /// The value to send.
    var dbusValue: DBusValue { get }
}

/// A Swift type that can be read from a ``DBusValue``.
public protocol DBusDecodable: Sendable {
    /// Reads a value. Variants are looked through.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value has another type.
    init(dbusValue: DBusValue) throws(DBusError)
}

/// A Swift type that maps to one D-Bus type both ways: the standard
/// library's integers, `Bool`, `Double`, `String`, ``ObjectPath``,
/// ``Signature``, ``DBusValue`` (a variant), and arrays and dictionaries of
/// them.
public typealias DBusCodable = DBusEncodable & DBusDecodable

@inline(__always)
func mismatch(_ want: DBusType, _ got: DBusValue) -> DBusError {
    DBusError(.invalidArgs, "expected '\(want.signature)', got '\(got.type.signature)'")
}


/// `UInt8` is the D-Bus byte (`y`).
extension UInt8: DBusCodable {
    /// Always `y`.
    public static var dbusType: DBusType { .byte }
    /// This value as a `y` to send.
    public var dbusValue: DBusValue { .byte(self) }
    /// Reads a `y`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `y`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .byte(let v) = dbusValue.unwrapped else { throw mismatch(.byte, dbusValue) }
        self = v
    }
}
/// `Bool` is the D-Bus boolean (`b`).
extension Bool: DBusCodable {
    /// Always `b`.
    public static var dbusType: DBusType { .boolean }
    /// This value as a `b` to send.
    public var dbusValue: DBusValue { .boolean(self) }
    /// Reads a `b`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `b`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .boolean(let v) = dbusValue.unwrapped else { throw mismatch(.boolean, dbusValue) }
        self = v
    }
}
/// `Int16` is the D-Bus signed 16-bit integer (`n`).
extension Int16: DBusCodable {
    /// Always `n`.
    public static var dbusType: DBusType { .int16 }
    /// This value as a `n` to send.
    public var dbusValue: DBusValue { .int16(self) }
    /// Reads a `n`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `n`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int16(let v) = dbusValue.unwrapped else { throw mismatch(.int16, dbusValue) }
        self = v
    }
}
/// `UInt16` is the D-Bus unsigned 16-bit integer (`q`).
extension UInt16: DBusCodable {
    /// Always `q`.
    public static var dbusType: DBusType { .uint16 }
    /// This value as a `q` to send.
    public var dbusValue: DBusValue { .uint16(self) }
    /// Reads a `q`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `q`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint16(let v) = dbusValue.unwrapped else { throw mismatch(.uint16, dbusValue) }
        self = v
    }
}
/// `Int32` is the D-Bus signed 32-bit integer (`i`).
extension Int32: DBusCodable {
    /// Always `i`.
    public static var dbusType: DBusType { .int32 }
    /// This value as a `i` to send.
    public var dbusValue: DBusValue { .int32(self) }
    /// Reads a `i`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `i`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int32(let v) = dbusValue.unwrapped else { throw mismatch(.int32, dbusValue) }
        self = v
    }
}
/// `UInt32` is the D-Bus unsigned 32-bit integer (`u`).
extension UInt32: DBusCodable {
    /// Always `u`.
    public static var dbusType: DBusType { .uint32 }
    /// This value as a `u` to send.
    public var dbusValue: DBusValue { .uint32(self) }
    /// Reads a `u`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `u`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint32(let v) = dbusValue.unwrapped else { throw mismatch(.uint32, dbusValue) }
        self = v
    }
}
/// `Int64` is the D-Bus signed 64-bit integer (`x`).
extension Int64: DBusCodable {
    /// Always `x`.
    public static var dbusType: DBusType { .int64 }
    /// This value as a `x` to send.
    public var dbusValue: DBusValue { .int64(self) }
    /// Reads a `x`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `x`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int64(let v) = dbusValue.unwrapped else { throw mismatch(.int64, dbusValue) }
        self = v
    }
}
/// `UInt64` is the D-Bus unsigned 64-bit integer (`t`).
extension UInt64: DBusCodable {
    /// Always `t`.
    public static var dbusType: DBusType { .uint64 }
    /// This value as a `t` to send.
    public var dbusValue: DBusValue { .uint64(self) }
    /// Reads a `t`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `t`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint64(let v) = dbusValue.unwrapped else { throw mismatch(.uint64, dbusValue) }
        self = v
    }
}
/// `Double` is the D-Bus IEEE 754 double (`d`).
extension Double: DBusCodable {
    /// Always `d`.
    public static var dbusType: DBusType { .double }
    /// This value as a `d` to send.
    public var dbusValue: DBusValue { .double(self) }
    /// Reads a `d`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `d`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .double(let v) = dbusValue.unwrapped else { throw mismatch(.double, dbusValue) }
        self = v
    }
}
/// `String` is the D-Bus string (`s`).
extension String: DBusCodable {
    /// Always `s`.
    public static var dbusType: DBusType { .string }
    /// This value as a `s` to send.
    public var dbusValue: DBusValue { .string(self) }
    /// Reads a `s`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let v) = dbusValue.unwrapped else { throw mismatch(.string, dbusValue) }
        self = v
    }
}
/// `ObjectPath` is the D-Bus object path (`o`).
extension ObjectPath: DBusCodable {
    /// Always `o`.
    public static var dbusType: DBusType { .objectPath }
    /// This value as a `o` to send.
    public var dbusValue: DBusValue { .objectPath(self) }
    /// Reads a `o`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `o`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .objectPath(let v) = dbusValue.unwrapped else { throw mismatch(.objectPath, dbusValue) }
        self = v
    }
}
/// `Signature` is the D-Bus signature (`g`).
extension Signature: DBusCodable {
    /// Always `g`.
    public static var dbusType: DBusType { .signature }
    /// This value as a `g` to send.
    public var dbusValue: DBusValue { .signature(self) }
    /// Reads a `g`, looking through variants.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a `g`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .signature(let v) = dbusValue.unwrapped else { throw mismatch(.signature, dbusValue) }
        self = v
    }
}

/// A ``DBusValue`` used as a typed element stands for a variant (`v`), so
/// `[String: DBusValue]` is `a{sv}`. Decoding unwraps one variant.
extension DBusValue: DBusCodable {
    /// Always `v`.
    public static var dbusType: DBusType { .variant }
    /// This value wrapped in a variant.
    public var dbusValue: DBusValue { .variant(self) }
    /// Takes the value out of one variant (or the value itself when it is
    /// not a variant). Never throws: every value is a `DBusValue`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        if case .variant(let inner) = dbusValue { self = inner } else { self = dbusValue }
    }
}

/// An array of encodable elements is a D-Bus array (`a` + the element's type).
extension Array: DBusEncodable where Element: DBusEncodable {
    /// `a` followed by the element type, e.g. `as` for `[String]`.
    public static var dbusType: DBusType { .array(Element.dbusType) }
    /// The elements, encoded in order, as an array that keeps its element
    /// type when empty.
    public var dbusValue: DBusValue { .array(Element.dbusType, map(\.dbusValue)) }
}

/// An array of decodable elements reads from any D-Bus array.
extension Array: DBusDecodable where Element: DBusDecodable {
    /// Reads an array (looking through variants) and decodes each element.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not an
    ///   array or an element does not decode as `Element`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .array(_, let items) = dbusValue.unwrapped else {
            throw DBusError(.invalidArgs, "expected an array, got '\(dbusValue.type.signature)'")
        }
        var out: [Element] = []
        out.reserveCapacity(items.count)
        for item in items { out.append(try Element(dbusValue: item)) }
        self = out
    }
}

/// A dictionary of encodable keys and values is a D-Bus dictionary (`a{kv}`).
extension Dictionary: DBusEncodable where Key: DBusEncodable, Value: DBusEncodable {
    /// `a{kv}` with the key and value types, e.g. `a{sv}` for `[String: DBusValue]`.
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    /// The entries, encoded, in the dictionary's (unspecified) order.
    public var dbusValue: DBusValue {
        .dictionary(key: Key.dbusType, value: Value.dbusType, map { .init($0.key.dbusValue, $0.value.dbusValue) })
    }
}

/// A dictionary of decodable keys and values reads from any D-Bus dictionary.
extension Dictionary: DBusDecodable where Key: DBusDecodable, Value: DBusDecodable {
    /// Reads a dictionary (looking through variants) and decodes each
    /// entry; later duplicate keys win.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the value is not a
    ///   dictionary or a key or value does not decode.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .dictionary(_, _, let entries) = dbusValue.unwrapped else {
            throw DBusError(.invalidArgs, "expected a dictionary, got '\(dbusValue.type.signature)'")
        }
        var out: [Key: Value] = [:]
        out.reserveCapacity(entries.count)
        for e in entries { out[try Key(dbusValue: e.key)] = try Value(dbusValue: e.value) }
        self = out
    }
}

extension DBusValue {
    /// Decodes this value as `T`.
    /// - Throws: ``DBusError`` (`invalidArgs`) on a type mismatch.
    public func decode<T: DBusDecodable>(as _: T.Type = T.self) throws(DBusError) -> T {
        try T(dbusValue: self)
    }

    /// Wraps any encodable Swift value: `DBusValue(UInt32(5))` is `.uint32(5)`.
    public init(_ value: some DBusEncodable) { self = value.dbusValue }
}

/// Decodes a message body (a list of values) into a tuple of Swift types.
/// - Throws: ``DBusError`` (`invalidArgs`) when the count or a type differs.
func decodeBody<each T: DBusDecodable>(_ body: [DBusValue], _ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
    var count = 0
    for _ in repeat (each T).self { count += 1 }
    guard body.count == count else {
        throw DBusError(.invalidArgs, "expected \(count) arguments, got \(body.count)")
    }
    var index = 0
    func next<U: DBusDecodable>(_: U.Type) throws(DBusError) -> U {
        defer { index += 1 }
        return try U(dbusValue: body[index])
    }
    return (repeat try next((each T).self))
}
