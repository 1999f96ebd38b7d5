import RelinkStore

/// One identifier's stored outbox as the client API shows it, kept in step
/// with the store by the effects each commit reports
/// (`StoreCommit.outboxEffects`), so that no read is needed per event.
/// Stored sequence numbers increase but may skip (relinkd chooses them, see
/// ``EventSequencer``).
struct OutboxCursor: Sendable, Hashable {
    /// One above the highest sequence number ever stored (`next_event_seq`).
    var nextStored: Int64
    /// The lowest stored sequence number (nil: none stored).
    var first: Int64?
    /// Stored events (neither acknowledged nor dropped).
    var pending: Int
    /// The bound (`outbox_limit`).
    var limit: Int64
    /// Events dropped by the bound since the identifier was created.
    var droppedTotal: Int64
    /// Dropped sequence numbers not yet acknowledged past.
    var droppedRange: ClosedRange<Int64>?

    init(_ status: OutboxStatus, limit: Int) {
        nextStored = status.nextSequence
        first = status.firstSequence
        pending = status.pendingCount
        self.limit = Int64(limit)
        droppedTotal = status.droppedTotal
        droppedRange = status.droppedRange
    }

    /// A new identifier's empty outbox.
    init(limit: Int) {
        self.init(OutboxStatus(nextSequence: 1, pendingCount: 0, droppedTotal: 0, droppedRange: nil), limit: limit)
    }

    /// The newest stored event's sequence number (0: none yet).
    var lastSequence: Int64 { nextStored - 1 }
    /// Every stored event at or below it was acknowledged or dropped: below
    /// both the lowest stored event and the dropped range (which events
    /// never stored may place above stored ones).
    var acknowledged: Int64 {
        min(droppedRange?.lowerBound ?? Int64.max, first ?? nextStored) - 1
    }

    /// Counts events that were numbered but never stored (their commit
    /// failed) as dropped, at once; the store learns it later
    /// (``UnstoredEvents``), and its ``OutboxEffect/unstoredCounted(_:count:)``
    /// then changes nothing here. `range`: their numbers.
    mutating func noteUnstored(_ range: ClosedRange<Int64>, count: Int64) {
        droppedTotal += count
        droppedRange = min(droppedRange?.lowerBound ?? range.lowerBound, range.lowerBound)
            ... max(droppedRange?.upperBound ?? range.upperBound, range.upperBound)
        // `nextStored` stays what the store holds: the sequencer's window
        // (and the skip after a crash) is measured from it.
    }

    /// Follows one committed effect on this identifier's outbox.
    mutating func apply(_ effect: OutboxEffect) {
        switch effect {
        case .appended(_, let sequence):
            nextStored = max(nextStored, sequence + 1)
            pending += 1
            if first == nil { first = sequence }
        case .dropped(_, let count, let range, let lowest):
            pending -= Int(count)
            droppedTotal += count
            droppedRange = min(droppedRange?.lowerBound ?? range.lowerBound, range.lowerBound)
                ... max(droppedRange?.upperBound ?? range.upperBound, range.upperBound)
            first = lowest
        case .acknowledged(_, let through, let deleted, let lowest):
            pending -= deleted
            first = lowest
            nextStored = max(nextStored, through + 1)  // an Ack past what is stored moves the store's next number too
            guard let range = droppedRange else { return }
            if range.upperBound <= through {
                droppedRange = nil
            } else if range.lowerBound <= through {
                droppedRange = (through + 1)...range.upperBound
            }
        case .unstoredCounted:
            break  // counted by noteUnstored when the commit failed
        }
    }
}
