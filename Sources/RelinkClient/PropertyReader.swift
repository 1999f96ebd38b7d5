import DBus

/// Reads typed values out of an `a{sv}` dictionary relinkd sent, with an
/// error naming the key when one is missing or has another type.
struct PropertyReader {
    let what: String
    let values: [String: DBusValue]

    init(_ what: String, _ values: [String: DBusValue]) {
        self.what = what
        self.values = values
    }

    /// - Throws: ``RelinkClientError`` (`Failed`) when missing or mistyped.
    func required<T: DBusDecodable>(_ key: String, _: T.Type = T.self) throws(RelinkClientError) -> T {
        guard let value = values[key] else { throw .badReply(what, "no '\(key)'") }
        do { return try T(dbusValue: value) } catch { throw .badReply(what, "'\(key)': \(error.message)") }
    }

    /// nil when missing. - Throws: ``RelinkClientError`` (`Failed`) when mistyped.
    func optional<T: DBusDecodable>(_ key: String, _: T.Type = T.self) throws(RelinkClientError) -> T? {
        guard let value = values[key] else { return nil }
        do { return try T(dbusValue: value) } catch { throw .badReply(what, "'\(key)': \(error.message)") }
    }

    /// `default` when missing. - Throws: ``RelinkClientError`` (`Failed`) when mistyped.
    func value<T: DBusDecodable>(_ key: String, default fallback: T) throws(RelinkClientError) -> T {
        try optional(key, T.self) ?? fallback
    }
}

/// Two strings, `(ss)`, as a subscription (service, characteristic).
struct StringPair: DBusDecodable, Hashable {
    var first: String
    var second: String

    init(dbusValue: DBusValue) throws(DBusError) {
        guard case .structure(let fields) = dbusValue.unwrapped, fields.count == 2 else {
            throw DBusError(.invalidArgs, "expected '(ss)', got '\(dbusValue.type.signature)'")
        }
        first = try String(dbusValue: fields[0])
        second = try String(dbusValue: fields[1])
    }
}
