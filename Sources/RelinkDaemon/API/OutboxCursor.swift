import RelinkStore

/// One identifier's outbox position as the client API shows it, kept in
/// step with the store's rules (Sources/RelinkStore/Store/OutboxWriter.swift)
/// so that no read is needed per event: stored events are the contiguous
/// range `first..<next`; past `limit` the oldest are dropped.
struct OutboxCursor: Sendable, Hashable {
    /// The oldest stored event's sequence number (== `next` when none).
    var first: Int64
    /// The sequence number the next event gets.
    var next: Int64
    /// The bound (`outbox_limit`).
    var limit: Int64
    /// Events dropped by the bound since the identifier was created.
    var droppedTotal: Int64
    /// Dropped sequence numbers not yet acknowledged past.
    var droppedRange: ClosedRange<Int64>?

    init(_ status: OutboxStatus, limit: Int) {
        next = status.nextSequence
        first = status.nextSequence - Int64(status.pendingCount)
        self.limit = Int64(limit)
        droppedTotal = status.droppedTotal
        droppedRange = status.droppedRange
    }

    /// A new identifier's empty outbox.
    init(limit: Int) {
        self.init(OutboxStatus(nextSequence: 1, pendingCount: 0, droppedTotal: 0, droppedRange: nil), limit: limit)
    }

    /// The newest event's sequence number (0: none yet).
    var lastSequence: Int64 { next - 1 }
    /// Every event at or below it was acknowledged or dropped.
    var acknowledged: Int64 { (droppedRange?.lowerBound ?? first) - 1 }

    /// An event with sequence number `sequence` was appended.
    mutating func appended(_ sequence: Int64) {
        next = max(next, sequence + 1)
        let count = next - first
        guard count > limit else { return }
        let excess = count - limit
        let newest = first + excess - 1
        droppedTotal += excess
        droppedRange = (droppedRange?.lowerBound ?? first)...newest
        first = newest + 1
    }

    /// Events up to and including `through` were acknowledged.
    mutating func acknowledged(through: Int64) {
        first = max(first, through + 1)
        guard let range = droppedRange else { return }
        if range.upperBound <= through {
            droppedRange = nil
        } else if range.lowerBound <= through {
            droppedRange = (through + 1)...range.upperBound
        }
    }
}
