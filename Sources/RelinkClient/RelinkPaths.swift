import DBus

/// relinkd's bus name, interfaces and object paths.
public enum RelinkPaths {
    public static let busName = "org.relink"
    public static let managerInterface = "org.relink.Manager1"
    public static let centralInterface = "org.relink.Central1"
    public static let peripheralInterface = "org.relink.Peripheral1"
    /// `/org/relink`: Manager1 and the ObjectManager.
    public static let manager = ObjectPath.relinkRoot

    /// The object of an identifier: `/org/relink/central/<escaped>`.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) for an invalid
    ///   identifier (see ``RelinkArguments/checkIdentifier(_:)``). Clients
    ///   should prefer the path `Register` returns.
    public static func central(for identifier: String) throws(RelinkClientError) -> ObjectPath {
        try RelinkArguments.checkIdentifier(identifier)
        do {
            return try ObjectPath("/org/relink/central/" + escape(identifier))
        } catch {
            throw .invalid("The identifier \(identifier.debugDescription) has no valid object path.")
        }
    }

    /// The object of a peripheral: `/org/relink/peripheral/<uuid>` with the
    /// UUID lowercased and `-` replaced by `_`.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) when `uuid` is not a UUID.
    public static func peripheral(for uuid: String) throws(RelinkClientError) -> ObjectPath {
        guard RelinkArguments.isUUID(uuid) else { throw .invalid("\(uuid.debugDescription) is not a peripheral UUID.") }
        do {
            return try ObjectPath("/org/relink/peripheral/" + uuid.lowercased().replacing("-", with: "_"))
        } catch {
            throw .invalid("\(uuid.debugDescription) is not a peripheral UUID.")
        }
    }

    /// The peripheral UUID of a peripheral object path, in the uppercase
    /// form of `Peripheral1.Id` and event payloads; nil when `path` is not one.
    public static func peripheralUUID(of path: ObjectPath) -> String? {
        let prefix = "/org/relink/peripheral/"
        guard path.rawValue.hasPrefix(prefix) else { return nil }
        let uuid = String(path.rawValue.dropFirst(prefix.count)).replacing("_", with: "-")
        return RelinkArguments.isUUID(uuid) ? uuid.uppercased() : nil
    }

    /// Escapes an identifier into one object path element: ASCII letters
    /// and digits are kept, every other UTF-8 byte becomes `_xx` (two
    /// lowercase hex digits).
    public static func escape(_ identifier: String) -> String {
        var out = ""
        out.reserveCapacity(identifier.utf8.count)
        for byte in identifier.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
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
    static let relinkRoot: ObjectPath = {
        do { return try ObjectPath("/org/relink") } catch { preconditionFailure("constant path") }
    }()
}
