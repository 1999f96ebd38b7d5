public import DBus
public import RelinkModel

/// The object paths of relinkd's API and their escaping (docs/api/README.md#objects):
/// the one place relinkd, relinkctl and the client library build or read them.
public enum APIPath {
    /// `/org/relink`: `Manager1` and the ObjectManager.
    public static let manager = ObjectPath(trusted: managerText)
    static let managerText = "/org/relink"
    /// Prefix of identifier objects.
    public static let centralPrefix = "/org/relink/central/"
    /// Prefix of peripheral objects.
    public static let peripheralPrefix = "/org/relink/peripheral/"

    /// Prefix of write-stream objects.
    public static let writeStreamPrefix = "/org/relink/stream/"

    /// The `WriteStream1` object with number `n`: `/org/relink/stream/<n>`.
    public static func writeStream(_ n: UInt64) -> ObjectPath {
        ObjectPath(trusted: writeStreamPrefix + String(n))
    }

    /// The `Central1` object of an identifier: `/org/relink/central/<escaped>`.
    public static func central(_ identifier: RestoreIdentifier) -> ObjectPath {
        ObjectPath(trusted: centralPrefix + escape(identifier.rawValue))
    }

    /// The `Peripheral1` object of a peripheral: `/org/relink/peripheral/<uuid>`,
    /// the UUID lowercase with `-` as `_`.
    public static func peripheral(_ id: PeripheralID) -> ObjectPath {
        ObjectPath(trusted: peripheralPrefix + element(of: id))
    }

    /// The path element of a peripheral identifier.
    static func element(of id: PeripheralID) -> String {
        id.text(lowercase: true, separator: UInt8(ascii: "_"))
    }

    /// The identifier a `Central1` path names; nil when it names none.
    public static func identifier(of path: ObjectPath) -> RestoreIdentifier? {
        guard path.rawValue.hasPrefix(centralPrefix), let text = unescape(String(path.rawValue.dropFirst(centralPrefix.count))) else { return nil }
        return try? RestoreIdentifier(text)
    }

    /// The peripheral a `Peripheral1` path names; nil when it names none.
    public static func peripheralID(of path: ObjectPath) -> PeripheralID? {
        guard path.rawValue.hasPrefix(peripheralPrefix) else { return nil }
        var text = String(path.rawValue.dropFirst(peripheralPrefix.count))
        text.replace("_", with: "-")
        return try? PeripheralID(parsing: text)
    }

    /// What a path names, without decoding it (the per-caller filter runs
    /// this for every message).
    public enum Target: Hashable, Sendable {
        /// An identifier's object, by its escaped element.
        case central(String)
        /// A peripheral's object, by its element.
        case peripheral(String)
        /// Anything else.
        case other
    }

    /// What `path` names.
    public static func target(of path: ObjectPath) -> Target {
        let raw = path.rawValue
        if raw.hasPrefix(centralPrefix) { return .central(String(raw.dropFirst(centralPrefix.count))) }
        if raw.hasPrefix(peripheralPrefix) { return .peripheral(String(raw.dropFirst(peripheralPrefix.count))) }
        return .other
    }

    /// Escapes text into one object path element: ASCII letters and digits
    /// are kept, every other UTF-8 byte becomes `_xx` (two lowercase hex digits).
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isAlphanumeric(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out.append("_")
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            }
        }
        return out
    }

    /// Reverses ``escape(_:)``; nil when `element` is not a valid escape
    /// (a `_` not followed by two lowercase hex digits, another character,
    /// or bytes that are not UTF-8).
    public static func unescape(_ element: String) -> String? {
        var bytes: [UInt8] = []
        var input = Array(element.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "_") {
                guard let high = input.popFirst().flatMap(hexValue), let low = input.popFirst().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else if isAlphanumeric(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    private static func hexDigit(_ v: UInt8) -> Character {
        Character(Unicode.Scalar(v < 10 ? 0x30 + v : 0x61 + v - 10))
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}

extension ObjectPath {
    /// A path built from constants and escaped elements, valid by construction.
    public init(trusted raw: String) {
        do { self = try ObjectPath(raw) } catch { preconditionFailure("invalid constant object path \(raw)") }
    }
}
