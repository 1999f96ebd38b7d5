/// Numbers one identifier's events and holds them from their numbering to
/// their commit, so that attached clients see them before the disk does.
///
/// **Why and the invariant.** A client attached to an identifier gets each
/// event as soon as relinkd has it, not one `fsync` later; the commit
/// follows, and `Ack` and replay work on the stored outbox as before. An
/// event may go out before its commit only if its number is below the
/// stored `next_event_seq` plus ``window``. After a crash relinkd starts
/// numbering at the stored `next_event_seq` plus ``window`` (the clean-stop
/// marker says when no skip is needed), so a number a client may have seen
/// is never handed out again; the price is a gap of at most ``window``
/// numbers after a crash. Past the window (a burst outrunning the disk),
/// events wait for their commit.
struct EventSequencer: Sendable {
    /// How far numbering may run ahead of what is stored before events wait
    /// for their commit; also the skip after a crash.
    static let window: Int64 = 128

    /// An event between its numbering and its commit.
    struct Event: Sendable, Hashable {
        var sequence: Int64
        var kind: String
        var payload: String
        /// Sent to the attached clients (or due to be, in order).
        var released = false
    }

    /// The next number to hand out.
    private(set) var next: Int64
    /// Numbered, not yet committed (nor failed), oldest first.
    private(set) var recent: [Event] = []
    /// Released events whose commit failed: they were shown but not stored.
    private(set) var releasedButLost = 0

    /// Continues after a stored outbox whose next number is `nextStored`;
    /// `cleanStart` when the last run stopped with everything committed.
    init(nextStored: Int64, cleanStart: Bool) {
        next = nextStored + (cleanStart ? 0 : Self.window)
    }

    /// Numbers an event.
    mutating func number(kind: String, payload: String) -> Int64 {
        let sequence = next
        next += 1
        recent.append(Event(sequence: sequence, kind: kind, payload: payload))
        return sequence
    }

    /// The events that may go out now, oldest first: from the oldest not yet
    /// released, those below `nextStored + window`, and any at or below
    /// `committedThrough` (stored already); stops at the first that must
    /// wait, so that order holds.
    mutating func release(nextStored: Int64, committedThrough: Int64 = 0) -> [Event] {
        var out: [Event] = []
        for i in recent.indices where !recent[i].released {
            let sequence = recent[i].sequence
            guard sequence < nextStored + Self.window || sequence <= committedThrough else { break }
            recent[i].released = true
            out.append(recent[i])
        }
        return out
    }

    /// Released events above `after`, oldest first (for a client that has
    /// just caught up with the store).
    func released(after: Int64) -> [Event] {
        recent.filter { $0.released && $0.sequence > after }
    }

    /// Forgets committed events.
    mutating func committed(_ sequences: Set<Int64>) {
        recent.removeAll { sequences.contains($0.sequence) }
    }

    /// Forgets events whose commit failed; returns those never released
    /// (nobody saw them).
    mutating func failed(_ sequences: Set<Int64>) -> [Event] {
        let lost = recent.filter { sequences.contains($0.sequence) }
        recent.removeAll { sequences.contains($0.sequence) }
        releasedButLost += lost.filter(\.released).count
        return lost.filter { !$0.released }
    }

    /// Whether nothing shown to a client is missing from the store or on its way there.
    var settled: Bool { recent.allSatisfy { !$0.released } && releasedButLost == 0 }
}
