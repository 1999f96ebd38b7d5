internal import DequeModule

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
///
/// **Cost.** When commits fall behind (a slow disk, a busy machine), events
/// pile up here; each operation costs what it touches, not the backlog:
/// released events are always the oldest (``release(nextStored:committedThrough:)``
/// goes oldest first and stops at the first that must wait), so their
/// count marks where releasing resumes, and commits, which come in
/// numbering order, take events off the front. Scanning from the start at
/// each release, and copying the list at each mutation of a copy, made a
/// backlog quadratic: relinkd at 100 streaming links stopped answering
/// with its main thread in `release` and memory climbing (2026-11-30).
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
    /// Numbered, not yet committed (nor failed), oldest first (so in
    /// increasing sequence).
    private(set) var recent: Deque<Event> = []
    /// How many of `recent`, from the front, were released.
    private var releasedCount = 0
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
        while releasedCount < recent.count {
            let sequence = recent[releasedCount].sequence
            guard sequence < nextStored + Self.window || sequence <= committedThrough else { break }
            recent[releasedCount].released = true
            out.append(recent[releasedCount])
            releasedCount += 1
        }
        return out
    }

    /// Released events above `after`, oldest first (for a client that has
    /// just caught up with the store).
    func released(after: Int64) -> [Event] {
        recent.prefix(releasedCount).filter { $0.sequence > after }
    }

    /// Forgets committed events. Sequences it does not hold (events whose
    /// number was chosen, not handed out here) are ignored.
    mutating func committed(_ sequences: Set<Int64>) {
        var left = sequences.count
        while let first = recent.first, sequences.contains(first.sequence) {
            recent.removeFirst()
            if first.released { releasedCount -= 1 }
            left -= 1
        }
        // Out of numbering order (not seen so far): the general case.
        guard left > 0, let low = recent.first?.sequence, let high = recent.last?.sequence,
              sequences.contains(where: { (low...high).contains($0) }) else { return }
        recent.removeAll { sequences.contains($0.sequence) }
        releasedCount = recent.prefix { $0.released }.count
    }

    /// Forgets events whose commit failed; returns those never released
    /// (nobody saw them).
    mutating func failed(_ sequences: Set<Int64>) -> [Event] {
        let lost = recent.filter { sequences.contains($0.sequence) }
        recent.removeAll { sequences.contains($0.sequence) }
        releasedCount = recent.prefix { $0.released }.count
        releasedButLost += lost.filter(\.released).count
        return lost.filter { !$0.released }
    }

    /// Whether nothing shown to a client is missing from the store or on its way there.
    var settled: Bool { releasedCount == 0 && releasedButLost == 0 }
}
