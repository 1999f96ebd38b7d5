extension Message {
    var containsUnixFD: Bool { body.contains { $0.containsUnixFD } }
}

extension DBusValue {
    var containsUnixFD: Bool {
        switch self {
        case .unixFD: true
        case .array(let t, let items): t.containsUnixFD && items.contains { $0.containsUnixFD }
        case .dictionary(let k, let v, let entries):
            (k.containsUnixFD || v.containsUnixFD) && entries.contains { $0.key.containsUnixFD || $0.value.containsUnixFD }
        case .structure(let ms): ms.contains { $0.containsUnixFD }
        case .variant(let inner): inner.containsUnixFD
        default: false
        }
    }
}

extension DBusType {
    var containsUnixFD: Bool {
        switch self {
        case .unixFD, .variant: true
        case .array(let e): e.containsUnixFD
        case .dictionary(let k, let v): k.containsUnixFD || v.containsUnixFD
        case .structure(let ms): ms.contains { $0.containsUnixFD }
        default: false
        }
    }
}
