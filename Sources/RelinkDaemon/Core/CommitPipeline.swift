import RelinkStore
import Synchronization

/// relinkd's store commits in flight, so that the daemon's loop does not
/// wait for the disk.
///
/// The loop hands each request to the store (``RelinkStore/submit(_:completion:)``)
/// under a ticket and goes on with its next input; the store's writer
/// queue reports each outcome here, in submission order, and the loop
/// takes the outcomes in that order (``take()``) to run what follows a
/// commit (outbox mirror, releasing events, journal lines). A call that
/// must come after some commits (a client's call, which may read what
/// they wrote) waits for them with ``wait(through:)``.
///
/// A value notified while the previous one's commit is on the disk thus
/// goes to clients at once (``EventSequencer`` allows it) instead of
/// after that fsync.
final class CommitPipeline: Sendable {
    private struct State {
        var lastIssued: UInt64 = 0
        /// Every ticket up to this one has an outcome.
        var finishedThrough: UInt64 = 0
        var outcomes: [UInt64: Result<StoreCommit, StoreError>] = [:]
        /// Outcomes not yet taken by the loop, in ticket order.
        var ready: [(UInt64, Result<StoreCommit, StoreError>)] = []
        var waiters: [(through: UInt64, CheckedContinuation<Void, Never>)] = []
        /// A ``DaemonInput/commitsDone`` input is on its way.
        var announced = false
    }

    private let state = Mutex(State())

    /// A ticket for the next submission (tickets grow by one).
    func issue() -> UInt64 {
        state.withLock { s in
            s.lastIssued += 1
            return s.lastIssued
        }
    }

    /// The highest ticket issued.
    var lastIssued: UInt64 { state.withLock { $0.lastIssued } }

    /// Records an outcome (any thread). Outcomes become ready in ticket
    /// order, whatever order they arrive in.
    /// - Returns: true when the loop should be told (no announcement is
    ///   pending and something became ready).
    func finish(_ ticket: UInt64, _ outcome: Result<StoreCommit, StoreError>) -> Bool {
        let (resume, announce) = state.withLock { s -> ([CheckedContinuation<Void, Never>], Bool) in
            s.outcomes[ticket] = outcome
            var progressed = false
            while let next = s.outcomes.removeValue(forKey: s.finishedThrough + 1) {
                s.finishedThrough += 1
                s.ready.append((s.finishedThrough, next))
                progressed = true
            }
            var resume: [CheckedContinuation<Void, Never>] = []
            s.waiters.removeAll { waiter in
                guard waiter.through <= s.finishedThrough else { return false }
                resume.append(waiter.1)
                return true
            }
            let announce = progressed && !s.announced
            if announce { s.announced = true }
            return (resume, announce)
        }
        for continuation in resume { continuation.resume() }
        return announce
    }

    /// Returns once every ticket up to `ticket` has an outcome.
    func wait(through ticket: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s in
                if ticket <= s.finishedThrough { return true }
                s.waiters.append((ticket, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The outcomes ready so far, oldest first; clears the announcement.
    func take() -> [(UInt64, Result<StoreCommit, StoreError>)] {
        state.withLock { s in
            s.announced = false
            defer { s.ready.removeAll(keepingCapacity: true) }
            return s.ready
        }
    }
}

/// A store request handed to the store, and who waits for its outcome.
struct InFlightCommit: Sendable {
    enum Waiter: Sendable {
        /// Nobody but the loop: a failure is journalled.
        case loop
        /// ``Daemon/commitNow(_:)``, which takes the outcome and throws on failure.
        case caller
        /// A client's `Ack`, answered with the outcome.
        case acknowledgement(APICaller, CheckedContinuation<APIReply, Never>)
    }

    var request: RestoreBatch.Request
    var waiter: Waiter
}
