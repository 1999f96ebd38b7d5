import Synchronization

/// A central's events as its program reads them (``RelinkCentral/events``):
/// each event once, in sequence order, held in a buffer of bounded size.
///
/// **When the program falls behind** (the buffer is full), nothing is lost
/// and memory does not grow: relinkd keeps every event until it is
/// acknowledged, so the central stops buffering live events, and once the
/// program has read half the buffer it fetches the missed ones from
/// relinkd (`Central1.Events`) and goes on with live events where they
/// join. ``RelinkCentral/timesFellBehind`` counts these episodes. Events
/// relinkd itself dropped past its outbox bound are reported by relinkd
/// (`Central1.DroppedEvents`, docs/api/events.md), not here.
///
/// One task reads a sequence at a time (as with `AsyncStream`); the
/// sequence ends when the central closes or relinkd is gone for good, and
/// `next()` returns nil when the reading task is cancelled.
public struct RelinkEvents: AsyncSequence, Sendable {
    /// The element: one event.
    public typealias Element = RelinkClientEvent
    let buffer: RelinkEventBuffer

    /// Reads the events one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: RelinkEventBuffer
        /// The next event; nil once the sequence ended or the task was cancelled.
        public mutating func next() async -> RelinkClientEvent? { await buffer.next() }
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer) }
}

/// The bounded queue between a central's event pump and its program.
final class RelinkEventBuffer: Sendable {
    enum Offer: Equatable {
        /// Queued, or handed to the waiting reader.
        case taken
        /// The buffer holds `limit` events: not taken.
        case full
        /// The sequence has ended: not taken.
        case finished
    }

    private struct State {
        var items: [RelinkClientEvent] = []
        var head = 0
        var finished = false
        var reader: CheckedContinuation<RelinkClientEvent?, Never>?
        var roomWaiter: CheckedContinuation<Void, Never>?
        var count: Int { items.count - head }

        mutating func pop() -> RelinkClientEvent {
            let e = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return e
        }
    }

    /// The most events held at once.
    let limit: Int
    private let state = Mutex(State())

    /// A buffer of `limit` events (at least 2).
    init(limit: Int) { self.limit = max(2, limit) }

    /// Events held now (for tests).
    var count: Int { state.withLock { $0.count } }
    /// Whether a reader waits for an event (for tests).
    var readerWaiting: Bool { state.withLock { $0.reader != nil } }

    /// Queues `event`, or hands it to the reader waiting for one.
    func offer(_ event: RelinkClientEvent) -> Offer {
        let (result, reader) = state.withLock { s -> (Offer, CheckedContinuation<RelinkClientEvent?, Never>?) in
            if s.finished { return (.finished, nil) }
            if let r = s.reader {
                s.reader = nil
                return (.taken, r)
            }
            guard s.count < limit else { return (.full, nil) }
            s.items.append(event)
            return (.taken, nil)
        }
        reader?.resume(returning: event)
        return result
    }

    /// The next event: at once when one is held, else when one is offered;
    /// nil when the buffer finished empty or the task is cancelled.
    func next() async -> RelinkClientEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<RelinkClientEvent?, Never>) in
                let (answer, room) = state.withLock { s -> (RelinkClientEvent??, CheckedContinuation<Void, Never>?) in
                    if s.count > 0 {
                        let e = s.pop()
                        var room: CheckedContinuation<Void, Never>?
                        if s.count <= limit / 2 { (room, s.roomWaiter) = (s.roomWaiter, nil) }
                        return (.some(e), room)
                    }
                    if s.finished || Task.isCancelled { return (.some(nil), nil) }
                    s.reader = c
                    // A reader waiting on an empty buffer is room too.
                    let room = s.roomWaiter
                    s.roomWaiter = nil
                    return (nil, room)
                }
                room?.resume()
                if let answer { c.resume(returning: answer) }
            }
        } onCancel: {
            let reader = state.withLock { s -> CheckedContinuation<RelinkClientEvent?, Never>? in
                defer { s.reader = nil }
                return s.reader
            }
            reader?.resume(returning: nil)
        }
    }

    /// Returns once the reader has made room (the buffer is at most half
    /// full) or the buffer finished. One waiter at a time (the pump).
    func waitForRoom() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.finished || s.count <= limit / 2 { return true }
                s.roomWaiter = c
                return false
            }
            if now { c.resume() }
        }
    }

    /// Ends the sequence: the reader gets what is held, then nil.
    func finish() {
        let (reader, room) = state.withLock { s -> (CheckedContinuation<RelinkClientEvent?, Never>?, CheckedContinuation<Void, Never>?) in
            s.finished = true
            defer { (s.reader, s.roomWaiter) = (nil, nil) }
            return (s.reader, s.roomWaiter)
        }
        reader?.resume(returning: nil)
        room?.resume()
    }
}
