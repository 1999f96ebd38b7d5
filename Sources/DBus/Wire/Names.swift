/// Validation of D-Bus names (interface, member, bus and error names).
/// libdbus aborts the process when handed an invalid name, so every name is
/// checked here before it reaches libdbus.
public enum DBusNames {
    /// Whether `s` is a valid interface (or error) name: two or more
    /// `.`-separated elements of `[A-Za-z0-9_]`, not starting with a digit,
    /// at most 255 bytes.
    public static func isValidInterface(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard !u.isEmpty, u.count <= 255 else { return false }
        var elements = 0
        var start = true
        for c in u {
            if c == UInt8(ascii: ".") {
                if start { return false }
                start = true
            } else {
                guard ObjectPath.isNameByte(c) else { return false }
                if start, c >= 0x30, c <= 0x39 { return false }
                if start { elements += 1 }
                start = false
            }
        }
        return !start && elements >= 2
    }

    /// Whether `s` is a valid member (method or signal) name.
    public static func isValidMember(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard let f = u.first, u.count <= 255, !(f >= 0x30 && f <= 0x39) else { return false }
        return u.allSatisfy(ObjectPath.isNameByte)
    }

    /// Whether `s` is a valid bus name, unique (`:1.42`) or well-known.
    public static func isValidBusName(_ s: String) -> Bool {
        var u = Array(s.utf8)
        guard !u.isEmpty, u.count <= 255 else { return false }
        let unique = u[0] == UInt8(ascii: ":")
        if unique { u.removeFirst() }
        var elements = 0
        var start = true
        for c in u {
            if c == UInt8(ascii: ".") {
                if start { return false }
                start = true
            } else {
                guard ObjectPath.isNameByte(c) || c == UInt8(ascii: "-") else { return false }
                if start, !unique, c >= 0x30, c <= 0x39 { return false }
                if start { elements += 1 }
                start = false
            }
        }
        return !start && elements >= 2
    }

    static func checkInterface(_ s: String) throws(DBusError) {
        guard isValidInterface(s) else { throw DBusError(.invalidArgs, "invalid interface name '\(s)'") }
    }
    static func checkMember(_ s: String) throws(DBusError) {
        guard isValidMember(s) else { throw DBusError(.invalidArgs, "invalid member name '\(s)'") }
    }
    static func checkBusName(_ s: String) throws(DBusError) {
        guard isValidBusName(s) else { throw DBusError(.invalidArgs, "invalid bus name '\(s)'") }
    }
    static func checkErrorName(_ s: String) throws(DBusError) {
        guard isValidInterface(s) else { throw DBusError(.invalidArgs, "invalid error name '\(s)'") }
    }
}
