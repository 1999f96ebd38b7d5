import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a D-Bus message bus.
///
/// All I/O happens on one thread owned by the connection (see
/// `ConnectionLoop`); the methods here are safe to call from any task. The
/// connection closes when ``close()`` is called or the object is released;
/// pending calls then fail with ``DBusError/Name/disconnected`` and signal
/// streams end with that error.
public final class Connection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable, Hashable {
        /// `DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/run/dbus/system_bus_socket`.
        case system
        /// `DBUS_SESSION_BUS_ADDRESS` (required).
        case session
        /// An explicit D-Bus address such as `unix:path=/tmp/bus`.
        case address(String)

        /// The D-Bus address this bus names, variables looked up with
        /// `environment` (nil for unset or empty), so the choice can be
        /// tested without changing the process environment, which other
        /// threads read while they start processes.
        /// - Throws: ``DBusError`` `BadAddress` for an empty or invalid
        ///   address, or an unset `DBUS_SESSION_BUS_ADDRESS`.
        func address(environment: (String) -> String?) throws -> String {
            let address: String
            switch self {
            case .system:
                address = environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
            case .session:
                guard let a = environment("DBUS_SESSION_BUS_ADDRESS") else {
                    throw DBusError(.badAddress, "DBUS_SESSION_BUS_ADDRESS is not set")
                }
                address = a
            case .address(let a):
                address = a
            }
            guard !address.isEmpty, !address.utf8.contains(0) else {
                throw DBusError(.badAddress, "empty or invalid bus address")
            }
            return address
        }
    }

    let loop: ConnectionLoop
    /// The unique name the bus gave this connection, e.g. `:1.42`.
    public let uniqueName: String
    /// Whether Unix file descriptors can be sent on this connection.
    public let canPassUnixFDs: Bool
    let objects = ObjectRegistry()
    let uidCache = Mutex<[String: UInt32]>([:])
    let serving = Mutex(false)
    /// The installed filter, boxed: a function stored directly in a
    /// `Mutex` is re-abstracted on each `withLock` and written back wrapped
    /// in two more thunks, so every read made the next call deeper (each
    /// method call to relinkd went through thousands of thunks after an
    /// hour of acknowledgements).
    let objectFilter = Mutex<ObjectFilterBox?>(nil)
    let turns = CallTurns()

    private init(loop: ConnectionLoop, started: ConnectionLoop.Started) {
        self.loop = loop
        self.uniqueName = started.uniqueName
        self.canPassUnixFDs = started.canPassUnixFDs
    }

    deinit { try? loop.submit(.close) }

    /// Connects and registers with the bus.
    /// - Throws: ``DBusError``: `BadAddress` for an unusable address or an
    ///   unset `DBUS_SESSION_BUS_ADDRESS`; `NoServer`/`FileNotFound` when
    ///   nothing listens; `AuthFailed`; `NoReply` when `Hello` gets no answer.
    public static func connect(to bus: Bus) async throws -> Connection {
        let address = try bus.address(environment: Self.environment)
        let (loop, started) = try await ConnectionLoop.start(address: address)
        return Connection(loop: loop, started: started)
    }

    /// A variable of the process environment; nil when unset or empty.
    static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    /// An executor that runs tasks on this connection's I/O thread, between
    /// polls. Code that makes many sequential calls, or a ``serve()`` loop
    /// with short handlers, can run there with
    /// `withTaskExecutorPreference(connection.executor) { ... }` to save
    /// the thread hops between the I/O thread and the cooperative pool
    /// (lower latency per call). Such code must never block: while it runs,
    /// the connection does no I/O. After the connection closes, tasks
    /// preferring it continue on one private serial queue.
    public var executor: any TaskExecutor { loop }

    /// The same I/O thread as a serial executor, for actors that live on
    /// it (`nonisolated var unownedExecutor: UnownedSerialExecutor {
    /// connection.serialExecutor }`). Such actors run one job at a time
    /// between polls, hop to each other without a task switch, and can be
    /// entered from an inline signal handler. They must never block. After
    /// the connection closes they go on running, one job at a time, on the
    /// same private queue as ``executor``.
    public var serialExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Closes the connection: queued messages are flushed, pending calls
    /// fail with `Disconnected`, signal streams and ``serve()`` end.
    public func close() {
        try? loop.submit(.close)
    }

    // MARK: Client side

    /// Calls a method and returns the reply.
    /// - Parameters:
    ///   - timeout: how long to wait for the reply (libdbus's default is 25 s).
    /// - Throws: ``DBusError``: the error the peer or the bus replied (e.g.
    ///   `ServiceUnknown`, `UnknownObject`, `UnknownMethod`, `InvalidArgs`,
    ///   `AccessDenied`); `NoReply` on timeout or when the peer vanished
    ///   without answering; `InvalidArgs` locally for an invalid name or
    ///   argument; `Disconnected` when the connection is closed; and
    ///   `CancellationError` when the task is cancelled.
    public func call(
        destination: String?, path: ObjectPath, interface: String?, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws -> Message {
        let m = try Message.methodCall(
            destination: destination, path: path, interface: interface, member: method, body: arguments)
        return try await call(m, timeout: timeout)
    }

    /// Sends a method call built with ``Message/methodCall(destination:path:interface:member:body:)``.
    /// - Throws: as ``call(destination:path:interface:method:arguments:timeout:)``.
    public func call(_ message: Message, timeout: Duration = .seconds(25)) async throws -> Message {
        guard message.kind == .methodCall else { throw DBusError(.invalidArgs, "not a method call") }
        try message.validateBody()
        return try await loop.call(message, timeout: timeout)
    }

    /// Sends a message without waiting for anything (signals, replies,
    /// calls with `noReplyExpected`).
    /// - Throws: ``DBusError``: `InvalidArgs` for an invalid argument,
    ///   `Disconnected` when the connection is closed.
    public func send(_ message: Message) throws(DBusError) {
        try message.validateBody()
        try loop.submit(.send(message))
    }

    /// Emits a signal.
    /// - Throws: ``DBusError`` (`InvalidArgs` for an invalid name or
    ///   argument, `Disconnected`).
    public func emitSignal(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) {
        try send(Message.signal(path: path, interface: interface, member: member, body: arguments, destination: destination))
    }

    /// Subscribes to signals matching `rule`. The bus is asked to route them
    /// (`AddMatch`) before this returns, so no matching signal sent after
    /// the return is missed. The sequence yields signals in the order the
    /// bus sent them, with an unbounded buffer (nothing is dropped; a slow
    /// consumer costs memory, visible as ``SignalStream/backlog``). Ending the iteration (or dropping the
    /// sequence) removes the rule (`RemoveMatch`). The sequence throws
    /// `Disconnected` when the connection closes.
    /// - Throws: ``DBusError``: `MatchRuleInvalid`, or the bus's error for
    ///   `AddMatch` (e.g. `LimitsExceeded`), `Disconnected`.
    ///
    /// `inline`, when given, is offered each matching signal on the I/O
    /// thread as soon as it is read, before any task runs, when the stream
    /// holds nothing of this subscription (``SignalStream/pending`` is 0)
    /// and no task is waiting to run on the connection's executor, and when
    /// no other subscription of this connection matches it. It returns true
    /// when it has handled the signal (which then does not appear in the
    /// stream) and false to leave it, and every later one of the same
    /// read, to the stream. It must not block. An actor whose executor is
    /// ``serialExecutor`` can be entered from it with `assumeIsolated`:
    /// that is what it is for, a signal handled without a task switch.
    public func signals(matching rule: SignalMatch, inline: (@Sendable (Message) -> Bool)? = nil) async throws -> SignalStream {
        try rule.validate()
        let (id, stream, backlog, newlyTracked) = try loop.addSubscriber(rule, inline: inline)
        let result = SignalStream(stream: stream, loop: loop, id: id, backlog: backlog)
        do {
            if newlyTracked, let sender = rule.sender {
                _ = try await loop.call(BusCalls.addMatch(BusCalls.ownerRule(sender).description), timeout: .seconds(25))
                do {
                    _ = try await loop.call(BusCalls.call("GetNameOwner", [.string(sender)]), timeout: .seconds(25), ownerOf: sender)
                } catch let e as DBusError where e.name == .nameHasNoOwner {
                    // Not owned yet: NameOwnerChanged will tell us.
                }
            }
            _ = try await loop.call(BusCalls.addMatch(rule.description), timeout: .seconds(25))
        } catch {
            loop.removeSubscriber(id)
            throw error
        }
        return result
    }

    /// Watches `NameOwnerChanged` for one name (or all names when nil).
    /// - Throws: as ``signals(matching:)``.
    public func nameOwnerChanges(for name: String? = nil) async throws -> NameOwnerChanges {
        if let name { try DBusNames.checkBusName(name) }
        var rule = SignalMatch(sender: BusCalls.name, interface: BusCalls.name, member: "NameOwnerChanged", path: BusCalls.path)
        if let name { rule.arguments[0] = name }
        return NameOwnerChanges(signals: try await signals(matching: rule))
    }

    /// The unique name currently owning `name`, or nil when it has none.
    /// - Throws: ``DBusError`` (`InvalidArgs`, `Disconnected`, `NoReply`).
    public func nameOwner(of name: String) async throws -> String? {
        try DBusNames.checkBusName(name)
        do {
            let reply = try await loop.call(BusCalls.call("GetNameOwner", [.string(name)]), timeout: .seconds(25))
            return try reply.decode(String.self)
        } catch let e as DBusError where e.name == .nameHasNoOwner {
            return nil
        }
    }

    /// The Unix user id of the process behind a unique name, asked of the
    /// bus (`GetConnectionUnixUser`) and cached per name (unique names are
    /// never reused).
    /// - Throws: ``DBusError``: `NameHasNoOwner` when the peer is gone,
    ///   `InvalidArgs`, `Disconnected`.
    public func unixUser(of uniqueName: String) async throws -> UInt32 {
        if let uid = uidCache.withLock({ $0[uniqueName] }) { return uid }
        try DBusNames.checkBusName(uniqueName)
        let reply = try await loop.call(BusCalls.call("GetConnectionUnixUser", [.string(uniqueName)]), timeout: .seconds(25))
        let uid = try reply.decode(UInt32.self)
        uidCache.withLock { cache in
            if cache.count >= 4096 { cache.removeAll() }
            if uniqueName.hasPrefix(":") { cache[uniqueName] = uid }
        }
        return uid
    }

    /// The process id behind a unique (or well-known) name, asked of the
    /// bus (`GetConnectionUnixProcessID`).
    /// - Throws: ``DBusError``: `NameHasNoOwner` when the peer is gone,
    ///   `InvalidArgs`, `Disconnected`.
    public func unixProcessID(of name: String) async throws -> UInt32 {
        try DBusNames.checkBusName(name)
        let reply = try await loop.call(BusCalls.call("GetConnectionUnixProcessID", [.string(name)]), timeout: .seconds(25))
        return try reply.decode(UInt32.self)
    }

    // MARK: Names

    /// Flags of `RequestName`.
    public struct RequestNameFlags: OptionSet, Sendable {
        /// The flag bits as the bus defines them.
        public let rawValue: UInt32
        /// Flags from their bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Another connection asking with ``replaceExisting`` may take the name from us.
        public static let allowReplacement = RequestNameFlags(rawValue: 1)
        /// Take the name from its owner if that owner allowed replacement.
        public static let replaceExisting = RequestNameFlags(rawValue: 2)
        /// Fail with ``RequestNameReply/exists`` instead of waiting in the
        /// name's queue.
        public static let doNotQueue = RequestNameFlags(rawValue: 4)
    }

    /// The answer to `RequestName`.
    public enum RequestNameReply: UInt32, Sendable {
        /// We own the name now.
        case primaryOwner = 1
        /// Someone else owns it; we wait in its queue.
        case inQueue = 2
        /// Someone else owns it and we asked not to queue.
        case exists = 3
        /// We owned it already.
        case alreadyOwner = 4
    }

    /// Asks the bus for a well-known name.
    /// - Throws: ``DBusError``: `InvalidArgs` for an invalid name,
    ///   `AccessDenied` when the bus policy forbids owning it,
    ///   `Disconnected`, or `Failed` for an unknown answer.
    public func requestName(_ name: String, flags: RequestNameFlags = [.doNotQueue]) async throws -> RequestNameReply {
        try DBusNames.checkBusName(name)
        guard !name.hasPrefix(":") else { throw DBusError(.invalidArgs, "cannot request a unique name") }
        let reply = try await loop.call(BusCalls.call("RequestName", [.string(name), .uint32(flags.rawValue)]), timeout: .seconds(25))
        let code = try reply.decode(UInt32.self)
        guard let r = RequestNameReply(rawValue: code) else { throw DBusError(.failed, "RequestName answered \(code)") }
        return r
    }

    /// Gives a well-known name back. Returns the bus's code (1 released,
    /// 2 non-existent, 3 not owner).
    /// - Throws: ``DBusError`` (`InvalidArgs`, `Disconnected`).
    @discardableResult
    public func releaseName(_ name: String) async throws -> UInt32 {
        try DBusNames.checkBusName(name)
        let reply = try await loop.call(BusCalls.call("ReleaseName", [.string(name)]), timeout: .seconds(25))
        return try reply.decode(UInt32.self)
    }
}
