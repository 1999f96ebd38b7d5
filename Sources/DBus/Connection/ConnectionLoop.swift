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
        var rule: SignalMatch
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
    let incomingContinuation: AsyncStream<Message>.Continuation

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
        let queued = CallQueued.action
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (cont: Reply) in
                let (wake, err) = state.withLock { s -> (Bool, (any Error)?) in
                    if let e = s.closedError { return (false, e) }
                    if s.cancelled.remove(token) != nil { return (false, CancellationError()) }
                    s.outgoing.append(.call(m, token: token, timeout: nanos, cont, ownerOf: ownerOf))
                    return (s.needsWake(), nil)
                }
                if let err { cont.resume(throwing: err) } else {
                    if wake { wakeUp() }
                    queued?()
                }
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

    // MARK: On the I/O thread: the queue and the waiters (register, expire, fail all)

    /// Sends everything queued. Returns true when asked to close.
    func sendQueued(_ conn: OpaquePointer, canPassFDs: Bool) -> Bool {
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

    /// Fails calls whose deadline has passed with `NoReply`.
    func expire() {
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
    func finish(_ reason: DBusError) {
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
