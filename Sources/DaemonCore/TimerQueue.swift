internal import HeapModule
public import Restoration

/// Every connection machine's pending timers in one queue, earliest first,
/// so that relinkd keeps one sleeping task (until ``nextInstant()``) instead of
/// one per timer.
///
/// A task per timer cost about 3.4 KB of heap and a slot in the loop's task
/// group, whose removal of a finished child is a linear search: at 10,000
/// intents the sleeping timers were the largest item of relinkd's heap
/// (docs/startup-profile.md). An entry here is a few dozen bytes.
///
/// Timers due at the same instant fire in the order they were scheduled.
/// A cancelled timer never fires (``cancel(_:_:)``), and scheduling a
/// token an intent already has replaces the earlier timer: a machine made
/// again for the same intent starts its tokens over, and the old machine's
/// timer must not fire into the new one.
public struct TimerQueue<Instant: InstantProtocol>: Sendable {
    /// A timer due: the intent whose machine it belongs to, and its token.
    public struct Due: Sendable, Hashable {
        /// The intent whose machine scheduled it.
        public var intent: ConnectionIntentID
        /// The machine's token, handed back as `timerFired`.
        public var token: TimerToken

        /// The timer `token` of `intent`'s machine.
        public init(intent: ConnectionIntentID, token: TimerToken) {
            self.intent = intent
            self.token = token
        }
    }

    private struct Entry: Comparable {
        var instant: Instant
        var order: UInt64
        var due: Due

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.instant, lhs.order) < (rhs.instant, rhs.order)
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.order == rhs.order }
    }

    /// Entries in instant order; a cancelled or replaced one stays until it
    /// reaches the top or the heap is compacted (``compactIfSparse()``).
    private var heap = Heap<Entry>()
    /// Timers scheduled since the queue was last asked for its earliest or
    /// its due timers: a timer cancelled before then (at start-up each
    /// intent's first two steps schedule and cancel one within the same
    /// input) never enters the heap.
    private var pending: [Entry] = []
    /// The order number of each live timer; an entry whose number is not
    /// here is dead.
    private var live: [Due: UInt64] = [:]
    private var nextOrder: UInt64 = 0

    /// An empty queue.
    public init() {}

    /// How many timers are pending.
    public var count: Int { live.count }

    /// The instant of the earliest pending timer, nil when none is.
    public mutating func nextInstant() -> Instant? {
        settle()
        return heap.min?.instant
    }

    /// Adds a timer for `intent`'s machine, due at `instant`; one with the
    /// same intent and token is replaced.
    public mutating func schedule(_ intent: ConnectionIntentID, _ token: TimerToken, at instant: Instant) {
        let due = Due(intent: intent, token: token)
        nextOrder += 1
        live[due] = nextOrder
        pending.append(Entry(instant: instant, order: nextOrder, due: due))
    }

    /// Drops a pending timer. Returns whether it was pending.
    @discardableResult
    public mutating func cancel(_ intent: ConnectionIntentID, _ token: TimerToken) -> Bool {
        live.removeValue(forKey: Due(intent: intent, token: token)) != nil
    }

    /// Removes and returns the timers due at `now`, earliest first (at
    /// most `limit`, so that a loop with thousands due at once can serve
    /// other inputs between batches).
    public mutating func takeDue(at now: Instant, limit: Int = .max) -> [Due] {
        settle()
        var due: [Due] = []
        while due.count < limit, let top = heap.min, top.instant <= now {
            heap.removeMin()
            if live[top.due] == top.order {
                live[top.due] = nil
                due.append(top.due)
            }
        }
        settle()
        return due
    }

    private func isLive(_ entry: Entry) -> Bool { live[entry.due] == entry.order }

    /// Moves the live timers scheduled since into the heap, drops dead ones
    /// from its top (so that its minimum is a timer that will fire), and
    /// rebuilds it from its live entries when most are dead.
    private mutating func settle() {
        if !pending.isEmpty {
            let arrived = pending.filter(isLive)
            pending.removeAll(keepingCapacity: pending.count <= 1024)
            if arrived.count > heap.count {
                heap = Heap(heap.unordered.filter(isLive) + arrived)
            } else {
                for entry in arrived { heap.insert(entry) }
            }
        }
        while let top = heap.min, !isLive(top) { heap.removeMin() }
        if heap.count > 64, heap.count > 2 * live.count {
            heap = Heap(heap.unordered.filter(isLive))
        }
    }
}
