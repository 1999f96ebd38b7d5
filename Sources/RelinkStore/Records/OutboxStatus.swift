/// The state of one identifier's outbox: what waits, and what the bound dropped.
public struct OutboxStatus: Hashable, Sendable, Codable {
    /// The sequence number the next appended event gets: one above the
    /// highest number ever stored for the identifier.
    public var nextSequence: Int64
    /// The lowest stored sequence number (nil: nothing stored). Stored
    /// numbers increase but may skip (a writer may choose them), so this is
    /// not always `nextSequence - pendingCount`.
    public var firstSequence: Int64?
    /// Events waiting (appended, neither acknowledged nor dropped).
    public var pendingCount: Int
    /// Events dropped by the bound since the identifier was created.
    public var droppedTotal: Int64
    /// Sequence numbers dropped and not yet acknowledged past; a client that
    /// comes back learns from it which events it will never see. Cleared when
    /// the client acknowledges through its upper end.
    public var droppedRange: ClosedRange<Int64>?

    public init(nextSequence: Int64, pendingCount: Int, droppedTotal: Int64, droppedRange: ClosedRange<Int64>?,
                firstSequence: Int64? = nil) {
        self.nextSequence = nextSequence
        self.firstSequence = firstSequence
        self.pendingCount = pendingCount
        self.droppedTotal = droppedTotal
        self.droppedRange = droppedRange
    }
}
