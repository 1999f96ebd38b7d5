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

public typealias DBusCodable = DBusEncodable & DBusDecodable

@inline(__always)
func mismatch(_ want: DBusType, _ got: DBusValue) -> DBusError {
    DBusError(.invalidArgs, "expected '\(want.signature)', got '\(got.type.signature)'")
}


extension UInt8: DBusCodable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .byte(let v) = dbusValue.unwrapped else { throw mismatch(.byte, dbusValue) }
        self = v
    }
}
extension Bool: DBusCodable {
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: DBusValue { .boolean(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .boolean(let v) = dbusValue.unwrapped else { throw mismatch(.boolean, dbusValue) }
        self = v
    }
}
extension Int16: DBusCodable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int16(let v) = dbusValue.unwrapped else { throw mismatch(.int16, dbusValue) }
        self = v
    }
}
extension UInt16: DBusCodable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint16(let v) = dbusValue.unwrapped else { throw mismatch(.uint16, dbusValue) }
        self = v
    }
}
extension Int32: DBusCodable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int32(let v) = dbusValue.unwrapped else { throw mismatch(.int32, dbusValue) }
        self = v
    }
}
extension UInt32: DBusCodable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint32(let v) = dbusValue.unwrapped else { throw mismatch(.uint32, dbusValue) }
        self = v
    }
}
extension Int64: DBusCodable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int64(let v) = dbusValue.unwrapped else { throw mismatch(.int64, dbusValue) }
        self = v
    }
}
extension UInt64: DBusCodable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint64(let v) = dbusValue.unwrapped else { throw mismatch(.uint64, dbusValue) }
        self = v
    }
}
extension Double: DBusCodable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .double(let v) = dbusValue.unwrapped else { throw mismatch(.double, dbusValue) }
        self = v
    }
}
extension String: DBusCodable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let v) = dbusValue.unwrapped else { throw mismatch(.string, dbusValue) }
        self = v
    }
}
extension ObjectPath: DBusCodable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .objectPath(let v) = dbusValue.unwrapped else { throw mismatch(.objectPath, dbusValue) }
        self = v
    }
}
extension Signature: DBusCodable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .signature(let v) = dbusValue.unwrapped else { throw mismatch(.signature, dbusValue) }
        self = v
    }
}

/// A ``DBusValue`` used as a typed element stands for a variant (`v`), so
/// `[String: DBusValue]` is `a{sv}`. Decoding unwraps one variant.
extension DBusValue: DBusCodable {
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        if case .variant(let inner) = dbusValue { self = inner } else { self = dbusValue }
    }
}

extension Array: DBusEncodable where Element: DBusEncodable {
    public static var dbusType: DBusType { .array(Element.dbusType) }
    public var dbusValue: DBusValue { .array(Element.dbusType, map(\.dbusValue)) }
}

extension Array: DBusDecodable where Element: DBusDecodable {
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

extension Dictionary: DBusEncodable where Key: DBusEncodable, Value: DBusEncodable {
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    public var dbusValue: DBusValue {
        .dictionary(key: Key.dbusType, value: Value.dbusType, map { .init($0.key.dbusValue, $0.value.dbusValue) })
    }
}

extension Dictionary: DBusDecodable where Key: DBusDecodable, Value: DBusDecodable {
    /// Later duplicate keys win.
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

    /// Wraps any encodable Swift value.
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
