import DBus

/// Tolerant readers for property dictionaries: a missing or mistyped
/// property reads as nil, never as a crash (bluetoothd versions differ).
extension Dictionary where Key == String, Value == DBusValue {
    func string(_ key: String) -> String? {
        if case .string(let s)? = self[key]?.unwrapped { return s }
        return nil
    }
    func bool(_ key: String) -> Bool? {
        if case .boolean(let b)? = self[key]?.unwrapped { return b }
        return nil
    }
    func int16(_ key: String) -> Int16? {
        if case .int16(let v)? = self[key]?.unwrapped { return v }
        return nil
    }
    func uint16(_ key: String) -> UInt16? {
        if case .uint16(let v)? = self[key]?.unwrapped { return v }
        return nil
    }
    func path(_ key: String) -> ObjectPath? {
        if case .objectPath(let p)? = self[key]?.unwrapped { return p }
        return nil
    }
    func strings(_ key: String) -> [String] {
        guard case .array(_, let items)? = self[key]?.unwrapped else { return [] }
        return items.compactMap { if case .string(let s) = $0.unwrapped { s } else { nil } }
    }
    func paths(_ key: String) -> [ObjectPath] {
        guard case .array(_, let items)? = self[key]?.unwrapped else { return [] }
        return items.compactMap { if case .objectPath(let p) = $0.unwrapped { p } else { nil } }
    }
    func bytes(_ key: String) -> [UInt8]? {
        guard case .array(.byte, let items)? = self[key]?.unwrapped else { return nil }
        return items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    }
}
