import Foundation
import DBus
import Restoration
import RelinkModel

/// Object paths of the client API (docs/api/README.md#objects).
public enum APIPaths {
    public static let busName = "org.relink"
    public static let managerInterface = "org.relink.Manager1"
    public static let centralInterface = "org.relink.Central1"
    public static let peripheralInterface = "org.relink.Peripheral1"
    static let managerString = "/org/relink"
    static let centralPrefix = "/org/relink/central/"
    static let peripheralPrefix = "/org/relink/peripheral/"

    /// `/org/relink`.
    public static let manager = ObjectPath(trustedConstant: managerString)

    /// The path element for an identifier: ASCII letters and digits kept,
    /// every other byte of its UTF-8 as `_xx` (lowercase hex).
    public static func escape(_ identifier: String) -> String {
        var out = ""
        for byte in identifier.utf8 {
            let isAlnum = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            if isAlnum {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                out += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// The `Central1` object of an identifier.
    public static func central(_ identifier: String) -> ObjectPath {
        ObjectPath(trustedConstant: centralPrefix + escape(identifier))
    }

    /// The `Peripheral1` object of a peripheral.
    public static func peripheral(_ id: PeripheralID) -> ObjectPath {
        ObjectPath(trustedConstant: peripheralPrefix + id.uuid.uuidString.lowercased().replacingOccurrences(of: "-", with: "_"))
    }

    /// What a path names, for the per-caller filter.
    enum Target: Hashable {
        case central(String)  // the escaped element
        case peripheral(String)
        case other
    }

    static func target(of path: ObjectPath) -> Target {
        let raw = path.rawValue
        if raw.hasPrefix(centralPrefix) { return .central(String(raw.dropFirst(centralPrefix.count))) }
        if raw.hasPrefix(peripheralPrefix) { return .peripheral(String(raw.dropFirst(peripheralPrefix.count))) }
        return .other
    }
}

extension ObjectPath {
    /// A path built from constants and escaped elements, valid by construction.
    init(trustedConstant raw: String) {
        do { self = try ObjectPath(raw) } catch { preconditionFailure("invalid constant object path \(raw)") }
    }
}
