/// The service side of a ``Connection``: exported objects and the loop that
/// answers method calls.
extension Connection {
    /// Exports an object. When an object manager is above its path,
    /// `InterfacesAdded` is emitted.
    /// - Throws: ``DBusError``: `InvalidArgs` when the path is taken or the
    ///   object is exported elsewhere; `Disconnected`.
    public func export(_ object: ExportedObject) throws(DBusError) {
        try export(object, announceTo: nil)
    }

    /// As ``export(_:)``; with `destinations`, `InterfacesAdded` is unicast
    /// to each of these unique names (none for an empty list).
    /// - Throws: as ``export(_:)``.
    public func export(_ object: ExportedObject, announceTo destinations: [String]?) throws(DBusError) {
        let added = objects.state.withLock { s -> Bool in
            guard s.objects[object.path] == nil else { return false }
            s.objects[object.path] = object
            return true
        }
        guard added else { throw DBusError(.invalidArgs, "an object is already exported at \(object.path)") }
        object.attach(loop)
        // Nobody to tell (an empty list): the object's values are not
        // gathered (thousands of objects are exported before any client).
        if destinations?.isEmpty == true { return }
        if let manager = objects.manager(above: object.path) {
            guard case .dictionary(_, _, let entries) = object.managedValue() else { return }
            for destination in destinations.map({ $0.map(Optional.some) }) ?? [nil] {
                try emitSignal(
                    path: manager, interface: Introspection.objectManager.name, member: "InterfacesAdded",
                    arguments: [.objectPath(object.path), .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), entries)],
                    destination: destination)
            }
        }
    }

    /// Removes the object at `path`. When an object manager is above it,
    /// `InterfacesRemoved` is emitted. Does nothing when nothing is there.
    /// - Throws: ``DBusError`` (`Disconnected`).
    public func unexport(_ path: ObjectPath) throws(DBusError) {
        try unexport(path, announceTo: nil)
    }

    /// As ``unexport(_:)``; with `destinations`, `InterfacesRemoved` is
    /// unicast to each of these unique names (none for an empty list).
    /// - Throws: as ``unexport(_:)``.
    public func unexport(_ path: ObjectPath, announceTo destinations: [String]?) throws(DBusError) {
        guard let object = objects.state.withLock({ $0.objects.removeValue(forKey: path) }) else { return }
        object.attach(nil)
        if let manager = objects.manager(above: path) {
            for destination in destinations.map({ $0.map(Optional.some) }) ?? [nil] {
                try emitSignal(
                    path: manager, interface: Introspection.objectManager.name, member: "InterfacesRemoved",
                    arguments: [.objectPath(path), .array(.string, object.interfaces.map { .string($0.name) })], destination: destination)
            }
        }
    }

    /// Serves `org.freedesktop.DBus.ObjectManager` at `path` for every
    /// object exported below it.
    public func addObjectManager(at path: ObjectPath) {
        _ = objects.state.withLock { $0.managers.insert(path) }
    }

    /// Answers incoming method calls until the connection closes or the task
    /// is cancelled.
    ///
    /// Calls are taken in bus order by one loop, which runs on the
    /// connection's I/O thread (``executor``), so taking a call costs no
    /// thread hop. Introspection, `Get`, `GetAll`, `GetManagedObjects` and
    /// errors are answered in order by that loop itself. Method handlers and
    /// `Set` run concurrently as child tasks of one task group, so a slow
    /// handler blocks neither the connection nor other calls: by default on
    /// the global concurrent executor; with `handlersOnIOThread` on the I/O
    /// thread (lower latency, but then a handler must never block or
    /// compute for long, since the connection does no I/O meanwhile).
    ///
    /// Each sender's calls are dispatched in the order it sent them: a call
    /// waits while an earlier call of the same sender holds its turn, which
    /// only an ``DBusMethod/ordered`` method's handler does, until it
    /// returns or calls ``MethodCall/endTurn()`` (see ``CallTurns``).
    ///
    /// Run it once per connection (e.g. as a service of a `ServiceGroup`); a
    /// call that arrives before it runs waits for it. After cancellation
    /// the connection no longer answers calls.
    /// - Throws: ``DBusError`` (`Failed`) when `serve()` is already running.
    ///
    /// A sender with `maxCallsPerSender` calls in progress (read, not yet
    /// answered) has any further call refused at once with
    /// `LimitsExceeded`, until replies go out: the bound on what one client
    /// can make this service hold (the system bus counts only calls that
    /// expect a reply, 128 per connection by default).
    public func serve(handlersOnIOThread: Bool = false) async throws {
        try await serve(handlersOnIOThread: handlersOnIOThread, maxCallsPerSender: Self.defaultMaxCallsPerSender)
    }

    /// The bound ``serve(handlersOnIOThread:)`` puts on each sender's calls in progress.
    public static let defaultMaxCallsPerSender = 4_096

    /// ``serve(handlersOnIOThread:)`` with another bound on each sender's
    /// calls in progress.
    /// - Throws: ``DBusError`` (`Failed`) when `serve()` is already running.
    public func serve(handlersOnIOThread: Bool = false, maxCallsPerSender: Int) async throws {
        let first = serving.withLock { s -> Bool in
            if s { return false }
            s = true
            return true
        }
        guard first else { throw DBusError(.failed, "serve() is already running on this connection") }
        let handlerExecutor: any TaskExecutor = handlersOnIOThread ? loop : globalConcurrentExecutor
        await withTaskExecutorPreference(loop) {
            await withDiscardingTaskGroup { group in
                for await call in loop.incomingCalls {
                    guard let turn = turns.take(call.sender ?? "", limit: maxCallsPerSender) else {
                        if !call.noReplyExpected {
                            sendReply(Message.errorReply(to: call, DBusError(
                                .limitsExceeded, "more than \(maxCallsPerSender) calls of this connection in progress; wait for replies")))
                        }
                        continue
                    }
                    guard turn.now else {
                        // An earlier call of this sender still holds its turn.
                        group.addTask(executorPreference: handlerExecutor) {
                            await turn.wait()
                            switch self.dispatch(call, turn: turn) {
                            case .reply(let reply):
                                reply.map(self.sendReply)
                                turn.answered()
                            case .work(let after, let work):
                                await self.answer(call, turn: turn, after: after, work)
                            }
                        }
                        continue
                    }
                    switch dispatch(call, turn: turn) {
                    case .reply(let reply):
                        reply.map(sendReply)
                        turn.answered()
                    case .work(let after, let work):
                        group.addTask(executorPreference: handlerExecutor) {
                            await self.answer(call, turn: turn, after: after, work)
                        }
                    }
                }
            }
        }
    }

    /// Runs a call's work, sends its reply, ends its turn (if the work did
    /// not) and runs what waits for the reply.
    private func answer(_ call: Message, turn: CallTurn, after: AfterReplyActions?, _ work: @Sendable () async -> Message) async {
        let reply = await work()
        if !call.noReplyExpected { sendReply(reply) }
        turn.answered()
        after?.run()
    }

    enum Dispatch {
        case reply(Message?)
        /// Work answered by a child task; `after` runs once its reply is queued.
        case work(after: AfterReplyActions? = nil, _ body: @Sendable () async -> Message)
    }

    private func sendReply(_ reply: Message) {
        do {
            try send(reply)
        } catch {
            var fallback = reply
            fallback.kind = .error
            fallback.errorName = DBusError.Name.failed.rawValue
            fallback.body = [.string("the handler returned an invalid reply: \(error.message)".replacingNULs())]
            try? loop.submit(.send(fallback))
        }
    }

    static func errorMessage(_ error: any Error, for call: Message) -> Message {
        let e: DBusError =
            switch error {
            case let c as any DBusErrorConvertible: c.dbusError
            case is CancellationError: DBusError(.failed, "cancelled")
            default: DBusError(.failed, String(describing: error))
            }
        return Message.errorReply(to: call, e)
    }

    /// Decides what to do with one call; runs on the serve loop, or in a
    /// child task once the call's turn came, in each sender's order. Work
    /// that promises no order ends `turn` here, as it is dispatched; an
    /// ordered method's handler holds it (``DBusMethod/ordered``).
    func dispatch(_ call: Message, filtered: Bool = true, turn: CallTurn? = nil) -> Dispatch {
        func fail(_ name: DBusError.Name, _ text: String) -> Dispatch {
            .reply(call.noReplyExpected ? nil : Message.errorReply(to: call, DBusError(name, text)))
        }
        func ok(_ body: [DBusValue]) -> Dispatch {
            guard !call.noReplyExpected else { return .reply(nil) }
            do { return .reply(try Message.methodReturn(to: call, body: body)) } catch {
                return .reply(Message.errorReply(to: call, error))
            }
        }
        guard let path = call.path, let member = call.member else { return fail(.unknownMethod, "call without path or member") }
        if filtered, let filter = objectFilter.withLock({ $0 })?.filter, let answer = filteredDispatch(call, path: path, member: member, filter: filter, turn: turn) {
            return answer
        }
        let object = objects.object(at: path)
        let sig = call.signature.rawValue
        switch call.interface {
        case "org.freedesktop.DBus.Peer":
            guard member == "Ping" else { return fail(.unknownMethod, "no method \(member) in org.freedesktop.DBus.Peer") }
            guard sig.isEmpty else { return fail(.invalidArgs, "Ping takes no arguments, got '\(sig)'") }
            return ok([])
        case "org.freedesktop.DBus.Introspectable":
            guard member == "Introspect" else { return fail(.unknownMethod, "no method \(member) in org.freedesktop.DBus.Introspectable") }
            guard sig.isEmpty else { return fail(.invalidArgs, "Introspect takes no arguments, got '\(sig)'") }
            let children = objects.childNames(of: path)
            let isManager = objects.isManager(path)
            guard object != nil || isManager || !children.isEmpty || path == .root else {
                return fail(.unknownObject, "no object at \(path)")
            }
            return ok([.string(Introspection.xml(object: object, isManager: isManager, children: children))])
        case "org.freedesktop.DBus.ObjectManager" where objects.isManager(path):
            guard member == "GetManagedObjects" else { return fail(.unknownMethod, "no method \(member) in org.freedesktop.DBus.ObjectManager") }
            guard sig.isEmpty else { return fail(.invalidArgs, "GetManagedObjects takes no arguments, got '\(sig)'") }
            let entries = objects.objects(below: path).map { o -> DBusValue.DictionaryEntry in
                .init(.objectPath(o.path), o.managedValue())
            }
            return ok([.dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)), entries)])
        case "org.freedesktop.DBus.Properties":
            guard let object else { return fail(.unknownObject, "no object at \(path)") }
            return properties(call, member: member, signature: sig, object: object, turn: turn, fail: fail, ok: ok)
        default:
            guard let object else { return fail(.unknownObject, "no object at \(path)") }
            let candidates = call.interface.map { name in object.interface(name).map { [$0] } ?? [] } ?? object.interfaces
            if let name = call.interface, candidates.isEmpty { return fail(.unknownInterface, "no interface \(name) at \(path)") }
            guard let (iface, method) = candidates.lazy.compactMap({ i in i.methods.first { $0.name == member }.map { (i, $0) } }).first else {
                return fail(.unknownMethod, "no method \(member) at \(path)")
            }
            guard sig == method.inSignature else {
                return fail(iface.invalidSignatureError ?? .invalidArgs, "\(member) takes '\(method.inSignature)', got '\(sig)'")
            }
            let context = MethodCall(message: call, connection: self, turn: turn)
            let outTypes = method.outArguments.map(\.type)
            if let inline = method.inlineHandler {
                do {
                    let result = try inline(context)
                    guard result.map(\.type) == outTypes else {
                        return fail(.failed, "\(member) returned '\(result.map(\.type.signature).joined())', declared '\(method.outSignature)'")
                    }
                    return ok(result)
                } catch {
                    return .reply(call.noReplyExpected ? nil : Self.errorMessage(error, for: call))
                }
            }
            // A method that promises no order lets the sender's next call go now.
            if !method.ordered { turn?.end() }
            return .work(after: context.afterReplyActions) {
                do {
                    let result = try await method.handler(context)
                    guard result.map(\.type) == outTypes else {
                        return Message.errorReply(
                            to: call, DBusError(.failed, "\(member) returned '\(result.map(\.type.signature).joined())', declared '\(method.outSignature)'"))
                    }
                    return try Message.methodReturn(to: call, body: result)
                } catch {
                    return Self.errorMessage(error, for: call)
                }
            }
        }
    }

    private func properties(
        _ call: Message, member: String, signature sig: String, object: ExportedObject, turn: CallTurn?,
        fail: (DBusError.Name, String) -> Dispatch, ok: ([DBusValue]) -> Dispatch
    ) -> Dispatch {
        let args = call.body
        switch member {
        case "Get":
            guard sig == "ss", case .string(let iname) = args[0], case .string(let pname) = args[1] else {
                return fail(.invalidArgs, "Get takes 'ss', got '\(sig)'")
            }
            guard let iface = object.interface(iname) else { return fail(.unknownInterface, "no interface \(iname) at \(object.path)") }
            guard let p = iface.property(pname) else { return fail(.unknownProperty, "no property \(pname) in \(iname)") }
            guard p.access.readable else { return fail(.accessDenied, "property \(pname) is write-only") }
            if let getter = p.getter {
                let context = MethodCall(message: call, connection: self)
                turn?.end()
                return .work {
                    do { return try Message.methodReturn(to: call, body: [.variant(try await getter(context))]) } catch {
                        return Self.errorMessage(error, for: call)
                    }
                }
            }
            guard let v = object.value(of: pname, in: iname) else { return fail(.invalidArgs, "property \(pname) has no value") }
            return ok([.variant(v)])
        case "GetAll":
            guard sig == "s", case .string(let iname) = args[0] else { return fail(.invalidArgs, "GetAll takes 's', got '\(sig)'") }
            guard let iface = object.interface(iname) else {
                if iname.hasPrefix("org.freedesktop.DBus.") { return ok([.dictionary(key: .string, value: .variant, [])]) }
                return fail(.unknownInterface, "no interface \(iname) at \(object.path)")
            }
            if iface.properties.contains(where: { $0.getter != nil }) {
                let context = MethodCall(message: call, connection: self)
                turn?.end()
                return .work {
                    do {
                        return try Message.methodReturn(to: call, body: [.dictionary(key: .string, value: .variant, try await object.readableValues(iface, for: context))])
                    } catch {
                        return Self.errorMessage(error, for: call)
                    }
                }
            }
            return ok([.dictionary(key: .string, value: .variant, object.readableValues(iface))])
        case "Set":
            guard sig == "ssv", case .string(let iname) = args[0], case .string(let pname) = args[1],
                case .variant(let value) = args[2]
            else { return fail(.invalidArgs, "Set takes 'ssv', got '\(sig)'") }
            guard let iface = object.interface(iname) else { return fail(.unknownInterface, "no interface \(iname) at \(object.path)") }
            guard let p = iface.property(pname) else { return fail(.unknownProperty, "no property \(pname) in \(iname)") }
            guard p.access.writable else { return fail(.propertyReadOnly, "property \(pname) is read-only") }
            guard value.type == p.type else { return fail(.invalidArgs, "property \(pname) has type '\(p.type)', got '\(value.type)'") }
            let context = MethodCall(message: call, connection: self)
            turn?.end()
            return .work {
                do {
                    try await p.onSet?(value, context)
                    try object.setValue(value, of: pname, in: iname)
                    return try Message.methodReturn(to: call)
                } catch {
                    return Self.errorMessage(error, for: call)
                }
            }
        default:
            return fail(.unknownMethod, "no method \(member) in org.freedesktop.DBus.Properties")
        }
    }
}
