import Synchronization

/// The order of each sender's calls on one connection: D-Bus delivers a
/// connection's messages in order, and a service applies them in that
/// order.
///
/// Every incoming call takes a ticket from its sender's queue when the
/// serve loop reads it; it is dispatched only when every earlier call of
/// the same sender has ended its turn. A turn ends when the call is
/// answered, or earlier: an ordinary method, a property's getter and `Set`
/// end it as they are dispatched (they promise no order, as before), and
/// a method made ``DBusMethod/ordered`` ends it when its handler returns or
/// calls ``MethodCall/endTurn()``. Calls of different senders never wait
/// for one another.
///
/// **Bound.** A sender may have at most `limit` calls in progress (read and
/// not yet answered) on the connection; a call beyond it is refused at once
/// with `LimitsExceeded` (``Connection/serve(handlersOnIOThread:maxCallsPerSender:)``),
/// so one client cannot fill the service's memory with calls, including
/// calls sent without expecting a reply, which the bus does not count. A
/// sender's entry is dropped as soon as it has nothing in progress.
final class CallTurns: Sendable {
    private struct Queue {
        /// The next ticket to give out.
        var next: UInt64 = 0
        /// The ticket whose turn it is.
        var serving: UInt64 = 0
        /// Calls read and not yet answered.
        var inProgress = 0
        /// Calls waiting for their turn, by ticket.
        var parked: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var idle: Bool { serving == next && inProgress == 0 }
    }

    private let queues = Mutex<[String: Queue]>([:])

    /// Takes the next ticket of `sender` (`now` when it is already its
    /// turn), or nil when the sender has `limit` calls in progress.
    func take(_ sender: String, limit: Int = .max) -> CallTurn? {
        let taken = queues.withLock { q -> (UInt64, Bool)? in
            var queue = q[sender] ?? Queue()
            guard queue.inProgress < limit else { return nil }
            let ticket = queue.next
            queue.next += 1
            queue.inProgress += 1
            q[sender] = queue
            return (ticket, ticket == queue.serving)
        }
        guard let (ticket, now) = taken else { return nil }
        return CallTurn(turns: self, sender: sender, ticket: ticket, now: now)
    }

    /// A call of `sender` was answered.
    func answered(_ sender: String) {
        queues.withLock { q in
            guard var queue = q[sender] else { return }
            queue.inProgress -= 1
            q[sender] = queue.idle ? nil : queue
        }
    }

    /// Returns when it is `ticket`'s turn.
    func wait(_ sender: String, _ ticket: UInt64) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = queues.withLock { q -> Bool in
                guard q[sender]?.serving != ticket else { return true }
                q[sender]?.parked[ticket] = c
                return false
            }
            if now { c.resume() }
        }
    }

    /// Ends `ticket`'s turn (it must be the one being served) and wakes the
    /// next call of the sender, if it is waiting.
    func end(_ sender: String, _ ticket: UInt64) {
        let wake = queues.withLock { q -> CheckedContinuation<Void, Never>? in
            guard var queue = q[sender], queue.serving == ticket else { return nil }
            queue.serving += 1
            let next = queue.parked.removeValue(forKey: queue.serving)
            q[sender] = queue.idle ? nil : queue
            return next
        }
        wake?.resume()
    }

    /// Calls of `sender` in progress (for tests).
    func inProgress(_ sender: String) -> Int { queues.withLock { $0[sender]?.inProgress ?? 0 } }

    /// Senders with calls pending (for tests: entries do not pile up).
    var pendingSenders: Int { queues.withLock { $0.count } }
}

/// One call's place in its sender's order (see ``CallTurns``). Ending it
/// more than once is harmless.
final class CallTurn: Sendable {
    private let turns: CallTurns
    private let sender: String
    private let ticket: UInt64
    /// Whether the call could be dispatched at once when it was read.
    let now: Bool
    private let ended = Atomic<Bool>(false)

    init(turns: CallTurns, sender: String, ticket: UInt64, now: Bool) {
        self.turns = turns
        self.sender = sender
        self.ticket = ticket
        self.now = now
    }

    /// Returns when every earlier call of the sender has ended its turn.
    func wait() async {
        if !now { await turns.wait(sender, ticket) }
    }

    /// Lets the sender's next call be dispatched.
    func end() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        turns.end(sender, ticket)
    }

    /// The call was answered (its reply queued, or none expected): ends the
    /// turn if it was not, and frees its place under the sender's bound.
    /// Exactly once per call.
    func answered() {
        end()
        turns.answered(sender)
    }
}
