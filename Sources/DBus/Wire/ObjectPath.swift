/// A validated D-Bus object path such as `/org/bluez/hci0`.
public struct ObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The path text.
    public let rawValue: String

    /// Validates an object path: `/`, or `/`-separated non-empty elements of
    /// `[A-Za-z0-9_]`, with no trailing `/`.
    /// - Throws: ``DBusError`` named ``DBusError/Name/invalidArgs`` when
    ///   `string` is not a valid object path.
    public init(_ string: String) throws(DBusError) {
        guard ObjectPath.isValid(string) else {
            throw DBusError(.invalidArgs, "invalid object path '\(string)'")
        }
        self.rawValue = string
    }

    init(trusted: String) { self.rawValue = trusted }

    /// The root path `/`.
    public static let root = ObjectPath(trusted: "/")

    /// The path text.
    public var description: String { rawValue }

    /// Orders paths by their text, so a parent sorts before its children.
    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }

    /// Whether `s` is a valid object path.
    public static func isValid(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.first == UInt8(ascii: "/") else { return false }
        if u.count == 1 { return true }
        guard u.last != UInt8(ascii: "/") else { return false }
        var previousSlash = true
        for c in u.dropFirst() {
            if c == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else if isNameByte(c) {
                previousSlash = false
            } else {
                return false
            }
        }
        return true
    }

    static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F
    }

    /// The path with `element` appended, e.g. `/org` + `bluez`.
    /// - Throws: ``DBusError`` (`invalidArgs`) when `element` is empty or has
    ///   characters other than `[A-Za-z0-9_]`.
    public func appending(_ element: String) throws(DBusError) -> ObjectPath {
        try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The path one element up (`/org/bluez` for `/org/bluez/hci0`, `/`
    /// for `/org`); nil for `/`. No validation: the parent of a valid
    /// path is valid.
    public var parent: ObjectPath? {
        let u = rawValue.utf8
        guard u.count > 1, let slash = u.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        if slash == u.startIndex { return .root }
        return ObjectPath(trusted: String(rawValue[..<slash]))
    }

    /// Whether this path is `other` or lies below it.
    public func isDescendant(of other: ObjectPath, orSelf: Bool = true) -> Bool {
        if rawValue == other.rawValue { return orSelf }
        if other.rawValue == "/" { return true }
        return rawValue.hasPrefix(other.rawValue + "/")
    }
}
