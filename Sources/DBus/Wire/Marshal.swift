import CDBus

/// Conversion between ``Message`` and libdbus `DBusMessage*`. Used only on a
/// connection's I/O thread; the pointers never leave it.
struct Marshal {
    /// Parsed signatures by text, to avoid re-parsing common signatures.
    private var signatureCache: [String: [DBusType]] = [:]
    private var pathCache = HeaderStringCache()
    private var interfaceCache = HeaderStringCache()
    private var memberCache = HeaderStringCache()
    private var destinationCache = HeaderStringCache()
    private var senderCache = HeaderStringCache()
    private var signatureText = HeaderStringCache()
    private var lastSignature: (String, [DBusType]) = ("", [])

    // MARK: Swift -> libdbus

    /// Builds a libdbus message (+1 reference), or nil when out of memory.
    /// The message must have been validated (``Message/validateBody()``
    /// and the header names) before; libdbus aborts on invalid input.
    static func encode(_ m: Message) -> OpaquePointer? {
        let type: Int32 =
            switch m.kind {
            case .methodCall: 1
            case .methodReturn: 2
            case .error: 3
            case .signal: 4
            }
        guard let msg = dbus_message_new(type) else { return nil }
        var ok = true
        if let p = m.path { ok = ok && dbus_message_set_path(msg, p.rawValue) != 0 }
        if let i = m.interface { ok = ok && dbus_message_set_interface(msg, i) != 0 }
        if let mem = m.member { ok = ok && dbus_message_set_member(msg, mem) != 0 }
        if let e = m.errorName { ok = ok && dbus_message_set_error_name(msg, e) != 0 }
        if let d = m.destination { ok = ok && dbus_message_set_destination(msg, d) != 0 }
        if let r = m.replySerial { ok = ok && dbus_message_set_reply_serial(msg, r) != 0 }
        if m.kind == .methodCall {
            dbus_message_set_no_reply(msg, m.noReplyExpected ? 1 : 0)
            dbus_message_set_auto_start(msg, m.autoStart ? 1 : 0)
        }
        if ok, !m.body.isEmpty {
            var it = DBusMessageIter()
            dbus_message_iter_init_append(msg, &it)
            for v in m.body where ok { ok = append(v, &it) }
        }
        guard ok else {
            dbus_message_unref(msg)
            return nil
        }
        return msg
    }

    private static func basic<T: BitwiseCopyable>(_ it: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32, _ value: T) -> Bool {
        var v = value
        return dbus_message_iter_append_basic(it, code, &v) != 0
    }

    private static func open(
        _ it: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32, _ sig: String?,
        _ body: (UnsafeMutablePointer<DBusMessageIter>) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool =
            if let sig { dbus_message_iter_open_container(it, code, sig, &sub) != 0 } else {
                dbus_message_iter_open_container(it, code, nil, &sub) != 0
            }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(it, &sub)
            return false
        }
        return dbus_message_iter_close_container(it, &sub) != 0
    }

    static func append(_ v: DBusValue, _ it: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        switch v {
        case .byte(let x): return basic(it, 121, x)
        case .boolean(let x): return basic(it, 98, dbus_bool_t(x ? 1 : 0))
        case .int16(let x): return basic(it, 110, x)
        case .uint16(let x): return basic(it, 113, x)
        case .int32(let x): return basic(it, 105, x)
        case .uint32(let x): return basic(it, 117, x)
        case .int64(let x): return basic(it, 120, x)
        case .uint64(let x): return basic(it, 116, x)
        case .double(let x): return basic(it, 100, x)
        case .string(let s): return appendString(it, 115, s)
        case .objectPath(let p): return appendString(it, 111, p.rawValue)
        case .signature(let g): return appendString(it, 103, g.rawValue)
        case .unixFD(let fd): return basic(it, 104, fd.rawValue)  // libdbus dups it
        case .array(let t, let items):
            return open(it, 97, t.signature) { sub in
                if t == .byte {
                    let bytes: [UInt8] = items.map { v -> UInt8 in
                        if case .byte(let b) = v { return b }
                        return 0
                    }
                    return bytes.withUnsafeBufferPointer { buf in
                        var p = buf.baseAddress
                        return dbus_message_iter_append_fixed_array(sub, 121, &p, Int32(buf.count)) != 0
                    }
                }
                for item in items where !append(item, sub) { return false }
                return true
            }
        case .dictionary(let k, let vt, let entries):
            return open(it, 97, "{" + k.signature + vt.signature + "}") { sub in
                for e in entries {
                    let ok = open(sub, 101, nil) { entry in append(e.key, entry) && append(e.value, entry) }
                    if !ok { return false }
                }
                return true
            }
        case .structure(let members):
            return open(it, 114, nil) { sub in
                for m in members where !append(m, sub) { return false }
                return true
            }
        case .variant(let inner):
            return open(it, 118, inner.type.signature) { sub in append(inner, sub) }
        }
    }

    private static func appendString(_ it: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32, _ s: String) -> Bool {
        s.withCString { p in
            var ptr: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(it, code, &ptr) != 0
        }
    }

    // MARK: libdbus -> Swift

    /// Reads a received message. libdbus has validated it on arrival, so
    /// decoding follows its signature; returns nil only if the signature
    /// could not be parsed (which a conforming peer cannot produce).
    mutating func decode(_ msg: OpaquePointer) -> Message? {
        let kind: Message.Kind
        switch dbus_message_get_type(msg) {
        case 1: kind = .methodCall
        case 2: kind = .methodReturn
        case 3: kind = .error
        case 4: kind = .signal
        default: return nil
        }
        var m = Message(kind: kind)
        m.serial = dbus_message_get_serial(msg)
        let rs = dbus_message_get_reply_serial(msg)
        m.replySerial = rs == 0 ? nil : rs
        if let p = dbus_message_get_path(msg) { m.path = ObjectPath(trusted: pathCache.string(p)) }
        if let p = dbus_message_get_interface(msg) { m.interface = interfaceCache.string(p) }
        if let p = dbus_message_get_member(msg) { m.member = memberCache.string(p) }
        m.errorName = dbus_message_get_error_name(msg).map { String(cString: $0) }
        if let p = dbus_message_get_destination(msg) { m.destination = destinationCache.string(p) }
        if let p = dbus_message_get_sender(msg) { m.sender = senderCache.string(p) }
        m.noReplyExpected = dbus_message_get_no_reply(msg) != 0
        m.autoStart = dbus_message_get_auto_start(msg) != 0
        guard let sigPtr = dbus_message_get_signature(msg) else { return m }
        let sigText = signatureText.string(sigPtr)
        let types: [DBusType]
        if sigText == lastSignature.0 {
            types = lastSignature.1
        } else {
            guard let t = self.types(of: sigText) else { return nil }
            lastSignature = (sigText, t)
            types = t
        }
        if types.isEmpty { return m }
        var it = DBusMessageIter()
        guard dbus_message_iter_init(msg, &it) != 0 else { return m }
        var body: [DBusValue] = []
        body.reserveCapacity(types.count)
        for t in types {
            guard let v = read(&it, t) else { return nil }
            body.append(v)
            dbus_message_iter_next(&it)
        }
        m.body = body
        return m
    }

    private mutating func types(of sig: String) -> [DBusType]? {
        if let t = signatureCache[sig] { return t }
        guard let parsed = try? Signature(sig) else { return nil }
        if signatureCache.count > 512 { signatureCache.removeAll(keepingCapacity: true) }
        signatureCache[sig] = parsed.types
        return parsed.types
    }

    private mutating func read(_ it: UnsafeMutablePointer<DBusMessageIter>, _ t: DBusType) -> DBusValue? {
        var b = DBusBasicValue()
        switch t {
        case .byte: dbus_message_iter_get_basic(it, &b); return .byte(b.byt)
        case .boolean: dbus_message_iter_get_basic(it, &b); return .boolean(b.bool_val != 0)
        case .int16: dbus_message_iter_get_basic(it, &b); return .int16(b.i16)
        case .uint16: dbus_message_iter_get_basic(it, &b); return .uint16(b.u16)
        case .int32: dbus_message_iter_get_basic(it, &b); return .int32(b.i32)
        case .uint32: dbus_message_iter_get_basic(it, &b); return .uint32(b.u32)
        case .int64: dbus_message_iter_get_basic(it, &b); return .int64(Int64(b.i64))
        case .uint64: dbus_message_iter_get_basic(it, &b); return .uint64(UInt64(b.u64))
        case .double: dbus_message_iter_get_basic(it, &b); return .double(b.dbl)
        case .string:
            dbus_message_iter_get_basic(it, &b)
            return .string(b.str.map { String(cString: $0) } ?? "")
        case .objectPath:
            dbus_message_iter_get_basic(it, &b)
            return .objectPath(ObjectPath(trusted: b.str.map { String(cString: $0) } ?? "/"))
        case .signature:
            dbus_message_iter_get_basic(it, &b)
            guard let s = b.str.map({ String(cString: $0) }), let ts = types(of: s) else { return nil }
            return .signature(Signature(trusted: s, types: ts))
        case .unixFD:
            b.fd = -1
            dbus_message_iter_get_basic(it, &b)  // a dup owned by us
            guard b.fd >= 0 else { return nil }
            return .unixFD(UnixFD(takingOwnershipOf: b.fd))
        case .array(let e):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            if e == .byte {
                var p: UnsafeMutableRawPointer? = nil
                var n: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &p, &n)
                guard n > 0, let p else { return .array(.byte, []) }
                let buf = UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: Int(n))
                return .array(.byte, buf.map { .byte($0) })
            }
            var items: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                guard let v = read(&sub, e) else { return nil }
                items.append(v)
                dbus_message_iter_next(&sub)
            }
            return .array(e, items)
        case .dictionary(let k, let v):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            var entries: [DBusValue.DictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                guard let key = read(&entry, k) else { return nil }
                dbus_message_iter_next(&entry)
                guard let value = read(&entry, v) else { return nil }
                entries.append(.init(key, value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: k, value: v, entries)
        case .structure(let ms):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            var out: [DBusValue] = []
            out.reserveCapacity(ms.count)
            for (i, mt) in ms.enumerated() {
                if i > 0 { dbus_message_iter_next(&sub) }
                guard let v = read(&sub, mt) else { return nil }
                out.append(v)
            }
            return .structure(out)
        case .variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            guard let cs = dbus_message_iter_get_signature(&sub) else { return nil }
            let s = String(cString: cs)
            dbus_free(cs)
            guard let ts = types(of: s), ts.count == 1 else { return nil }
            guard let inner = read(&sub, ts[0]) else { return nil }
            return .variant(inner)
        }
    }
}
