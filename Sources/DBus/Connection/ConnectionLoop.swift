import CDBus
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The I/O loop that owns one libdbus connection.
///
/// **Threading.** The `DBusConnection*` is created, used and freed by one
/// dedicated thread and never leaves it; every libdbus call on the
/// connection and on its messages happens there. We chose this over
/// libdbus's own locking (`dbus_threads_init_default`) because the
/// recursive locks of libdbus serialise every call anyway, its blocking
/// calls would park Swift concurrency threads, and one owner makes the
/// order of incoming messages obvious: one thread pops them in bus order and
/// hands them on in that order.
///
/// Other threads talk to the loop through `state` (a `Mutex`): they append
/// outgoing work and write to an eventfd to wake the loop out of `poll`.
/// Method calls register a continuation keyed by serial; the loop resumes
/// it when the reply arrives, when the deadline passes (`NoReply`), when the
/// task is cancelled (`CancellationError`), or when the connection goes away
/// (`Disconnected`). No thread is blocked per call.
final class ConnectionLoop: Sendable {
    typealias Reply = CheckedContinuation<Message, any Error>
    /// Signals go to subscribers in batches (all matching messages of one
    /// read), which keeps the per-signal cost of the stream low.
    typealias SignalContinuation = AsyncThrowingStream<[Message], any Error>.Continuation

    struct Pending {
        var continuation: Reply
        var deadline: UInt64
        var token: UInt64
        /// For GetNameOwner calls made to track a well-known name: record
        /// the owner in loop order when the reply arrives.
        var ownerOf: String?
    }

    enum Outgoing {
        case call(Message, token: UInt64, timeout: UInt64, Reply, ownerOf: String?)
        case send(Message)
        case close
    }

    struct Subscriber {
        var rule: MatchRule
        var continuation: SignalContinuation
        var backlog: Backlog
        /// Takes a signal on the I/O thread, in `route`, when nothing of
        /// this subscriber waits in its stream (see
        /// ``Connection/signals(matching:inline:)``).
        var inline: (@Sendable (Message) -> Bool)?
    }

    /// Signals handed to a subscriber's stream and not yet taken by its
    /// consumer (`count`: the buffer is unbounded, and this makes its size
    /// visible), and those not yet done with (`unfinished`: also the one
    /// taken last, until the consumer asks for the next), which an inline
    /// handler must not overtake.
    final class Backlog: Sendable {
        let count = Atomic<Int>(0)
        let unfinished = Atomic<Int>(0)
    }

    struct State {
        var outgoing: [Outgoing] = []
        var wakeRequested = false
        /// Jobs of tasks that prefer this loop as their executor.
        var jobs: [UnownedJob] = []
        var loopThread: pthread_t?

        /// Whether the caller must write the eventfd (not when the loop
        /// is already being woken, nor when called on the loop thread).
        mutating func needsWake() -> Bool {
            if wakeRequested { return false }
            if let t = loopThread, pthread_equal(t, pthread_self()) != 0 { return false }
            wakeRequested = true
            return true
        }
        var pending: [UInt32: Pending] = [:]
        var serialByToken: [UInt64: UInt32] = [:]
        var cancelled: Set<UInt64> = []
        var nextToken: UInt64 = 1
        var subscribers: [UInt64: Subscriber] = [:]
        /// Well-known names tracked for match rules, with reference counts.
        var tracked: [String: Int] = [:]
        var owners: [String: String] = [:]
        var closedError: DBusError?
        var earliestDeadline: UInt64 = .max

        /// Whether `m` is for `subscriber`, with the tracked owner of its
        /// rule's well-known sender.
        func delivers(_ m: Message, to subscriber: Subscriber) -> Bool {
            let owner = subscriber.rule.needsOwnerTracking ? subscriber.rule.sender.flatMap { owners[$0] } : nil
            return subscriber.rule.matches(m, owner: owner)
        }
    }

    let state = Mutex(State())
    /// Where jobs run once the connection is closed (see ``runAfterClose(_:)``).
    let afterClose: DispatchQueue
    let wakeFD: Int32
    let incomingCalls: AsyncStream<Message>
    private let incomingContinuation: AsyncStream<Message>.Continuation

    init() throws(DBusError) {
        let fd = relink_dbus_wake_fd()
        guard fd >= 0 else { throw DBusError(.failed, "eventfd failed: errno \(errno)") }
        wakeFD = fd
        afterClose = DispatchQueue(label: "relink.dbus.closed-connection")
        (incomingCalls, incomingContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    deinit { close(wakeFD) }

    /// Marks the private queue as this loop's (for ``isCurrent``); once
    /// `self` is fully initialised.
    private func markQueue() {
        afterClose.setSpecific(key: Self.afterCloseKey, value: ObjectIdentifier(self).hashValue)
    }

    struct Started: Sendable {
        var uniqueName: String
        var canPassUnixFDs: Bool
    }

    /// Connects on a new I/O thread and registers with the bus (`Hello`).
    /// - Throws: ``DBusError`` from libdbus (e.g. `NoServer`, `BadAddress`,
    ///   `AuthFailed`, `FileNotFound`) when the connection fails.
    static func start(address: String) async throws -> (ConnectionLoop, Started) {
        let loop = try ConnectionLoop()
        loop.markQueue()
        let started: Started = try await withCheckedThrowingContinuation { cont in
            do {
                try IOThread.spawn { loop.threadMain(address: address, started: cont) }
            } catch {
                cont.resume(throwing: error)
            }
        }
        return (loop, started)
    }

    // MARK: API for other threads

    /// Queues work and wakes the loop.
    /// - Throws: the error the connection closed with.
    func submit(_ item: Outgoing) throws(DBusError) {
        let (wake, closed) = state.withLock { s -> (Bool, DBusError?) in
            if let e = s.closedError { return (false, e) }
            s.outgoing.append(item)
            return (s.needsWake(), nil)
        }
        if let closed { throw closed }
        if wake { wakeUp() }
    }

    func wakeUp() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Sends a method call and waits for its reply.
    /// - Throws: ``DBusError`` replied by the peer or the bus; `NoReply` on
    ///   timeout; `Disconnected` when the connection closes first;
    ///   `CancellationError` when the task is cancelled.
    func call(_ m: Message, timeout: Duration, ownerOf: String? = nil) async throws -> Message {
        let token = state.withLock { s in
            defer { s.nextToken += 1 }
            return s.nextToken
        }
        let nanos = IOThread.nanos(timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (cont: Reply) in
                let (wake, err) = state.withLock { s -> (Bool, (any Error)?) in
                    if let e = s.closedError { return (false, e) }
                    if s.cancelled.remove(token) != nil { return (false, CancellationError()) }
                    s.outgoing.append(.call(m, token: token, timeout: nanos, cont, ownerOf: ownerOf))
                    return (s.needsWake(), nil)
                }
                if let err { cont.resume(throwing: err) } else if wake { wakeUp() }
            }
        } onCancel: {
            self.cancel(token)
        }
    }

    private func cancel(_ token: UInt64) {
        let cont = state.withLock { s -> Reply? in
            if let i = s.outgoing.firstIndex(where: { if case .call(_, let t, _, _, _) = $0 { t == token } else { false } }) {
                guard case .call(_, _, _, let c, _) = s.outgoing.remove(at: i) else { return nil }
                return c
            }
            if let serial = s.serialByToken.removeValue(forKey: token), let p = s.pending.removeValue(forKey: serial) {
                return p.continuation
            }
            // Not queued, not pending: either the call has not been queued
            // yet (it will see this mark) or it is on its way from the queue
            // to `pending` on the I/O thread (which checks the mark). A
            // cancellation racing with completion leaves one stale token.
            s.cancelled.insert(token)
            return nil
        }
        cont?.resume(throwing: CancellationError())
    }

    // MARK: The I/O thread

    private func threadMain(address: String, started: CheckedContinuation<Started, any Error>) {
        var err = CDBus.DBusError()
        dbus_error_init(&err)
        guard let conn = dbus_connection_open_private(address, &err) else {
            started.resume(throwing: Self.take(&err))
            finish(DBusError(.disconnected, "connection failed"))
            return
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        guard dbus_bus_register(conn, &err) != 0 else {
            started.resume(throwing: Self.take(&err))
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            finish(DBusError(.disconnected, "connection failed"))
            return
        }
        let unique = dbus_bus_get_unique_name(conn).map { String(cString: $0) } ?? ""
        let fds = dbus_connection_can_send_type(conn, 104) != 0
        state.withLock { $0.loopThread = pthread_self() }
        started.resume(returning: Started(uniqueName: unique, canPassUnixFDs: fds))
        let reason = run(conn, canPassFDs: fds)
        // Fail waiters first: the flush below may block on a stuck bus.
        finish(reason)
        dbus_connection_flush(conn)
        dbus_connection_close(conn)
        dbus_connection_unref(conn)
    }

    private static func take(_ err: inout CDBus.DBusError) -> DBusError {
        let name = err.name.map { String(cString: $0) } ?? DBusError.Name.failed.rawValue
        let message = err.message.map { String(cString: $0) } ?? ""
        dbus_error_free(&err)
        return DBusError(.init(name), message)
    }

    /// The loop: send queued work, poll, read, route in order, expire.
    /// Returns why it ended.
    private func run(_ conn: OpaquePointer, canPassFDs: Bool) -> DBusError {
        var marshal = Marshal()
        let watches = Watches()
        guard watches.install(on: conn) else { return DBusError(.noMemory, "could not install watches") }
        defer { watches.uninstall(from: conn) }
        var fds: [pollfd] = []
        var polled: [OpaquePointer] = []
        while true {
            // Run tasks that prefer this thread; the jobs they enqueue (a
            // serve loop starting a handler, a handler finishing) run in the
            // same turn, up to a bound so that I/O is never starved. What a
            // job queued for sending goes out before the next job runs: a
            // signal or reply does not wait for unrelated work queued behind
            // it (relinkd's Event for a value, say, for the store commit
            // that value's handler also started).
            for _ in 0..<16 {
                let jobs = state.withLock { s in
                    let j = s.jobs
                    s.jobs.removeAll(keepingCapacity: true)
                    s.wakeRequested = false
                    return j
                }
                if jobs.isEmpty { break }
                for job in jobs {
                    runJob(job)
                    if state.withLock({ !$0.outgoing.isEmpty }), sendQueued(conn, canPassFDs: canPassFDs) {
                        return DBusError(.disconnected, "connection closed")
                    }
                }
            }
            if sendQueued(conn, canPassFDs: canPassFDs) {
                return DBusError(.disconnected, "connection closed")
            }
            var timeout: Int32 = -1
            if dbus_connection_get_dispatch_status(conn) == DBUS_DISPATCH_DATA_REMAINS {
                timeout = 0
            } else {
                let (earliest, busy) = state.withLock { ($0.earliestDeadline, !$0.jobs.isEmpty || !$0.outgoing.isEmpty) }
                if busy {
                    timeout = 0
                } else if earliest != .max {
                    let now = IOThread.now()
                    timeout = earliest <= now ? 0 : Int32(min((earliest - now + 999_999) / 1_000_000, 60_000))
                }
            }
            fds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            watches.pollEntries(into: &fds, watches: &polled)
            var readable = false
            let n = poll(&fds, nfds_t(fds.count), timeout)
            if n < 0, errno != EINTR {
                return DBusError(.ioError, "poll failed: errno \(errno)")
            }
            if n > 0 {
                if fds[0].revents != 0 {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                }
                readable = watches.handle(fds, from: 1, watches: polled)
            }
            var batch: [Message] = []
            pop(conn, into: &batch, marshal: &marshal)
            // libdbus reads at most 2 KiB per call: in a burst (a read that
            // brought several messages), read on while reads bring whole
            // messages, so the burst is handled in large batches (one
            // wake-up and one stream hand-off per batch). Request/response
            // traffic does not pay the extra read.
            if readable, batch.count >= 4 {
                for _ in 0..<32 where batch.count < 1024 {
                    let before = batch.count
                    watches.readAgain()
                    pop(conn, into: &batch, marshal: &marshal)
                    if batch.count == before { break }
                }
            }
            if !batch.isEmpty, route(batch) {
                return DBusError(.disconnected, "the bus closed the connection")
            }
            // What inline handlers queued goes out now, not after the jobs.
            if state.withLock({ !$0.outgoing.isEmpty }), sendQueued(conn, canPassFDs: canPassFDs) {
                return DBusError(.disconnected, "connection closed")
            }
            if dbus_connection_get_is_connected(conn) == 0,
                dbus_connection_get_dispatch_status(conn) != DBUS_DISPATCH_DATA_REMAINS
            {
                return DBusError(.disconnected, "the bus closed the connection")
            }
            expire()
        }
    }

    private func pop(_ conn: OpaquePointer, into batch: inout [Message], marshal: inout Marshal) {
        while let msg = dbus_connection_pop_message(conn) {
            if let m = marshal.decode(msg) { batch.append(m) }
            dbus_message_unref(msg)
        }
    }

    /// Sends everything queued. Returns true when asked to close.
    private func sendQueued(_ conn: OpaquePointer, canPassFDs: Bool) -> Bool {
        let work = state.withLock { s in
            let w = s.outgoing
            s.outgoing.removeAll(keepingCapacity: true)
            return w
        }
        if work.isEmpty { return false }
        var failed: [(Reply, any Error)] = []
        var closing = false
        for item in work {
            switch item {
            case .close:
                closing = true
            case .send(let m):
                if !canPassFDs, m.containsUnixFD { continue }
                if let msg = Marshal.encode(m) {
                    dbus_connection_send(conn, msg, nil)
                    dbus_message_unref(msg)
                }
            case .call(let m, let token, let timeout, let cont, let ownerOf):
                if !canPassFDs, m.containsUnixFD {
                    failed.append((cont, DBusError(.notSupported, "this connection cannot pass Unix file descriptors")))
                    continue
                }
                guard let msg = Marshal.encode(m) else {
                    failed.append((cont, DBusError(.noMemory, "could not build the message")))
                    continue
                }
                var serial: UInt32 = 0
                let sent = dbus_connection_send(conn, msg, &serial) != 0
                dbus_message_unref(msg)
                guard sent else {
                    failed.append((cont, DBusError(.noMemory, "could not queue the message")))
                    continue
                }
                let deadline = IOThread.now() &+ timeout
                let wasCancelled = state.withLock { s in
                    if s.cancelled.remove(token) != nil { return true }
                    s.pending[serial] = Pending(continuation: cont, deadline: deadline, token: token, ownerOf: ownerOf)
                    s.serialByToken[token] = serial
                    s.earliestDeadline = min(s.earliestDeadline, deadline)
                    return false
                }
                if wasCancelled { failed.append((cont, CancellationError())) }
            }
        }
        for (c, e) in failed { c.resume(throwing: e) }
        return closing
    }

    /// Hands the leading signals of a batch to their subscriber's inline
    /// handler, in order, while each has exactly one subscriber, that
    /// subscriber has an inline handler and nothing in its stream, and the
    /// handler takes it. Only when no task waits to run: a job queued
    /// before (a reply's continuation, an earlier signal's consumer) must
    /// not be overtaken. Returns how many were taken.
    private func routeInline(_ batch: [Message]) -> Int {
        var taken = 0
        for m in batch {
            guard m.kind == .signal, m.sender != "org.freedesktop.DBus", m.path?.rawValue != "/org/freedesktop/DBus/Local" else { break }
            let handler = state.withLock { s -> (@Sendable (Message) -> Bool)? in
                guard s.jobs.isEmpty else { return nil }
                var found: Subscriber?
                for sub in s.subscribers.values where s.delivers(m, to: sub) {
                    if found != nil { return nil }
                    found = sub
                }
                guard let found, found.backlog.unfinished.load(ordering: .sequentiallyConsistent) == 0 else { return nil }
                return found.inline
            }
            guard let handler, handler(m) else { break }
            taken += 1
        }
        return taken
    }

    /// Routes received messages in order. Returns true on disconnection.
    private func route(_ whole: [Message]) -> Bool {
        let taken = routeInline(whole)
        if taken == whole.count { return false }
        let batch = whole[taken...]
        var replies: [(Reply, Message)] = []
        var yields: [UInt64: (SignalContinuation, Backlog, [Message])] = [:]
        var yieldOrder: [UInt64] = []
        var calls: [Message] = []
        var disconnected = false
        state.withLock { s in
            for m in batch {
                switch m.kind {
                case .methodReturn, .error:
                    guard let rs = m.replySerial, let p = s.pending.removeValue(forKey: rs) else { continue }
                    s.serialByToken[p.token] = nil
                    if let name = p.ownerOf, s.tracked[name] != nil {
                        if m.kind == .methodReturn, case .string(let owner)? = m.body.first {
                            s.owners[name] = owner
                        } else {
                            s.owners[name] = nil
                        }
                    }
                    replies.append((p.continuation, m))
                case .signal:
                    if m.path?.rawValue == "/org/freedesktop/DBus/Local", m.member == "Disconnected" {
                        disconnected = true
                        continue
                    }
                    if m.sender == "org.freedesktop.DBus", m.member == "NameOwnerChanged",
                        m.body.count == 3, case .string(let name) = m.body[0], s.tracked[name] != nil,
                        case .string(let newOwner) = m.body[2]
                    {
                        s.owners[name] = newOwner.isEmpty ? nil : newOwner
                    }
                    for (id, sub) in s.subscribers where s.delivers(m, to: sub) {
                        if yields[id] == nil {
                            yields[id] = (sub.continuation, sub.backlog, [m])
                            yieldOrder.append(id)
                        } else {
                            yields[id]?.2.append(m)
                        }
                    }
                case .methodCall:
                    calls.append(m)
                }
            }
        }
        for (c, m) in replies {
            if let e = m.error { c.resume(throwing: e) } else { c.resume(returning: m) }
        }
        for id in yieldOrder {
            guard let (c, backlog, ms) = yields[id] else { continue }
            backlog.unfinished.add(ms.count, ordering: .sequentiallyConsistent)
            backlog.count.add(ms.count, ordering: .relaxed)
            c.yield(ms)
        }
        for m in calls { incomingContinuation.yield(m) }
        return disconnected
    }

    /// Fails calls whose deadline has passed with `NoReply`.
    private func expire() {
        let now = IOThread.now()
        let expired = state.withLock { s -> [Reply] in
            guard s.earliestDeadline <= now else { return [] }
            var out: [Reply] = []
            var earliest = UInt64.max
            for (serial, p) in s.pending {
                if p.deadline <= now {
                    s.pending[serial] = nil
                    s.serialByToken[p.token] = nil
                    out.append(p.continuation)
                } else {
                    earliest = min(earliest, p.deadline)
                }
            }
            s.earliestDeadline = earliest
            return out
        }
        for c in expired {
            c.resume(throwing: DBusError(.noReply, "no reply within the timeout"))
        }
    }

    /// Marks the loop closed and fails everything still waiting.
    private func finish(_ reason: DBusError) {
        let (pending, queued, subs, jobs) = state.withLock { s in
            s.closedError = reason
            s.loopThread = nil
            let jobs = s.jobs
            s.jobs.removeAll()
            let p = Array(s.pending.values.map(\.continuation))
            let q = s.outgoing
            let subs = Array(s.subscribers.values)
            s.pending.removeAll()
            s.serialByToken.removeAll()
            s.outgoing.removeAll()
            s.subscribers.removeAll()
            return (p, q, subs, jobs)
        }
        for job in jobs { runAfterClose(job) }
        for c in pending { c.resume(throwing: reason) }
        for case .call(_, _, _, let c, _) in queued { c.resume(throwing: reason) }
        for sub in subs { sub.continuation.finish(throwing: reason) }
        incomingContinuation.finish()
    }
}
