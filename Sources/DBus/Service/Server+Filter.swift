/// Introspection, properties and the object manager under a per-caller
/// ``ObjectFilter``: answered by child tasks after asking the filter.
extension Connection {
    /// The filtered answer for the standard interfaces, or nil when the
    /// call is not one of them (then normal dispatch applies).
    func filteredDispatch(_ call: Message, path: ObjectPath, member: String, filter: @escaping ObjectFilter, turn: CallTurn?) -> Dispatch? {
        let sender = call.sender ?? ""
        switch call.interface {
        case "org.freedesktop.DBus.Introspectable" where member == "Introspect":
            guard call.signature.rawValue.isEmpty else { return nil }  // refused by the normal dispatch
            turn?.end()
            return .work {
                let object = self.objects.object(at: path)
                let visibleObject: ExportedObject? = if let object, await filter(path, sender) { object } else { nil }
                let children = await self.visibleChildNames(of: path, sender: sender, filter: filter)
                let isManager = self.objects.isManager(path)
                guard visibleObject != nil || isManager || !children.isEmpty || path == .root else {
                    return Message.errorReply(to: call, DBusError(.unknownObject, "no object at \(path)"))
                }
                return Self.reply(to: call, [.string(Introspection.xml(object: visibleObject, isManager: isManager, children: children))])
            }
        case "org.freedesktop.DBus.ObjectManager" where objects.isManager(path) && member == "GetManagedObjects":
            guard call.signature.rawValue.isEmpty else { return nil }
            turn?.end()
            return .work {
                var entries: [DBusValue.DictionaryEntry] = []
                for o in self.objects.objects(below: path) where await filter(o.path, sender) {
                    entries.append(.init(.objectPath(o.path), o.managedValue()))
                }
                return Self.reply(to: call, [.dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)), entries)])
            }
        case "org.freedesktop.DBus.Properties":
            guard objects.object(at: path) != nil else { return nil }
            // Ask the filter first; a visible object gets the normal answer.
            // Properties promise no order: the sender's next call may go.
            turn?.end()
            return .work {
                guard await filter(path, sender) else {
                    return Message.errorReply(to: call, DBusError(.unknownObject, "no object at \(path)"))
                }
                switch self.dispatch(call, filtered: false, turn: turn) {
                case .reply(let m): return m ?? Message.errorReply(to: call, DBusError(.failed, "no reply"))
                case .work(_, let work): return await work()
                }
            }
        case "org.freedesktop.DBus.Peer":
            return nil
        default:
            // A method of an object the caller may not see is answered as
            // if there were no object, before the signature or the
            // arguments are looked at: the error must not depend on
            // whether the object exists.
            guard let object = objects.object(at: path) else { return nil }
            // An inline method checks its caller itself (DBusMethod.inline(_:in:out:_:)).
            let candidates = call.interface.map { name in object.interface(name).map { [$0] } ?? [] } ?? object.interfaces
            if candidates.contains(where: { $0.methods.contains { $0.name == member && $0.inlineHandler != nil } }) { return nil }
            // Only an ordered method holds the turn through the filter.
            if !candidates.contains(where: { $0.methods.contains { $0.name == member && $0.ordered } }) { turn?.end() }
            let after = AfterReplyActions()
            return .work(after: after) {
                guard await filter(path, sender) else {
                    return Message.errorReply(to: call, DBusError(.unknownObject, "no object at \(path)"))
                }
                switch self.dispatch(call, filtered: false, turn: turn) {
                case .reply(let m): return m ?? Message.errorReply(to: call, DBusError(.failed, "no reply"))
                case .work(let inner, let work):
                    let reply = await work()
                    if let inner { after.add { inner.run() } }
                    return reply
                }
            }
        }
    }

    private static func reply(to call: Message, _ body: [DBusValue]) -> Message {
        do { return try Message.methodReturn(to: call, body: body) } catch { return Message.errorReply(to: call, error) }
    }

    /// Direct child names of `path` through which a visible object (or an
    /// object manager) lies.
    private func visibleChildNames(of path: ObjectPath, sender: String, filter: ObjectFilter) async -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        let (objectPaths, managers) = objects.state.withLock { (Array($0.objects.keys), Array($0.managers)) }
        var names = Set<String>()
        func first(_ p: ObjectPath) -> String? {
            guard p.rawValue.hasPrefix(prefix), p != path else { return nil }
            return p.rawValue.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        }
        for m in managers { if let n = first(m) { names.insert(n) } }
        for p in objectPaths {
            guard let n = first(p), !names.contains(n) else { continue }
            if await filter(p, sender) { names.insert(n) }
        }
        return names.sorted()
    }
}
