import RelinkModel
import RelinkStore
import RelinkAPI

/// Events that were numbered but never stored because their commit failed
/// (a full disk, a store gone read-only), and how that is journalled.
///
/// **Why.** Such an event's number is missing from the stored outbox. A
/// client that finds a gap outside `dropped_range` reads it as the skip
/// after a crash, which loses nothing stored (docs/api/events.md). So an
/// event that could not be stored is counted as **dropped** at once (the
/// outbox mirror, ``OutboxCursor/noteUnstored(_:count:)``), and the store
/// is told as soon as it takes writes again
/// (``StoreMutation/countUnstoredEvents(_:count:range:)``, built by
/// ``takeReport()``): `dropped_events` grows and `dropped_range` names the
/// numbers, as for the bound's drops. Nothing is dropped in silence.
///
/// The journal gets one line when the store starts refusing writes, at most
/// one summary per ``summaryInterval`` while it goes on, and one line when
/// it takes writes again, whatever the rate of events (a band at 20 Hz on
/// a full disk must not write 40 lines a second to the journal).
struct UnstoredEvents: Sendable {
    /// Events not stored, for one identifier.
    struct Tally: Sendable, Hashable {
        /// How many.
        var count: Int64 = 0
        /// Their numbers not yet acknowledged past (nil: none, or all
        /// acknowledged past since).
        var range: ClosedRange<Int64>?

        mutating func add(_ other: Tally) {
            count += other.count
            guard let added = other.range else { return }
            range = min(range?.lowerBound ?? added.lowerBound, added.lowerBound)...max(range?.upperBound ?? added.upperBound, added.upperBound)
        }

        mutating func acknowledged(through: Int64) {
            guard let current = range else { return }
            if current.upperBound <= through { range = nil } else if current.lowerBound <= through { range = (through + 1)...current.upperBound }
        }
    }

    /// A journal line the caller writes.
    enum Line: Sendable, Hashable {
        /// The store refused a write after accepting them.
        case started(error: String)
        /// The store still refuses writes: since the last line, `requests`
        /// failed and `events` were not stored.
        case still(requests: Int, events: Int64, error: String)
        /// The store takes writes again after `requests` failed and
        /// `events` were not stored, over `lasted`.
        case recovered(requests: Int, events: Int64, lasted: Duration)
        /// One request was refused for what it asked (not for the storage),
        /// with `events` events in it.
        case refused(events: Int64, error: String)
    }

    /// What `Status` shows of the store: whether it refuses writes, how many
    /// events it could not store since relinkd started (each counted as
    /// dropped), and the last failure.
    struct Health: Sendable, Hashable {
        var refusing: Bool
        var unstoredEvents: Int64
        var lastError: String?

        /// `Status`'s `store` entry.
        var entry: StatusDocument.StoreHealth {
            StatusDocument.StoreHealth(refusingWrites: refusing, unstoredEvents: unstoredEvents, lastError: lastError)
        }
    }

    /// The store's health now.
    var health: Health { Health(refusing: refusing, unstoredEvents: total, lastError: lastError) }

    /// At most one "still refusing" summary per this interval.
    static let summaryInterval: Duration = .seconds(10)

    /// Not yet handed to the store, by identifier.
    private(set) var pending: [RestoreIdentifier: Tally] = [:]
    /// In a report request not yet committed.
    private(set) var reporting: [RestoreIdentifier: Tally]?
    /// Events not stored since relinkd started (for `Status`).
    private(set) var total: Int64 = 0
    /// The store refuses writes: the last commit failed.
    private(set) var refusing = false
    /// The last commit failure's text (for `Status`).
    private(set) var lastError: String?

    private var since: ContinuousClock.Instant?
    private var lastLine: ContinuousClock.Instant?
    private var failedRequests = 0, failedEvents: Int64 = 0
    private var sinceLineRequests = 0, sinceLineEvents: Int64 = 0

    /// A request failed to commit; `lost` are its events' numbers, by
    /// identifier; `storage`: the storage failed (``StoreError/isStorageFailure``),
    /// not the request. Returns the journal line due now, if any.
    mutating func commitFailed(lost: [RestoreIdentifier: Set<Int64>], error: String, storage: Bool = true,
                               now: ContinuousClock.Instant) -> Line? {
        var events: Int64 = 0
        for (id, sequences) in lost {
            guard let low = sequences.min(), let high = sequences.max() else { continue }
            pending[id, default: Tally()].add(Tally(count: Int64(sequences.count), range: low...high))
            events += Int64(sequences.count)
        }
        total += events
        guard storage else { return events > 0 ? .refused(events: events, error: error) : nil }
        lastError = error
        failedRequests += 1
        failedEvents += events
        guard refusing else {
            refusing = true
            since = now
            lastLine = now
            return .started(error: error)
        }
        sinceLineRequests += 1
        sinceLineEvents += events
        guard let lastLine, lastLine.duration(to: now) >= Self.summaryInterval else { return nil }
        defer { self.lastLine = now; sinceLineRequests = 0; sinceLineEvents = 0 }
        return .still(requests: sinceLineRequests, events: sinceLineEvents, error: error)
    }

    /// A request committed. Returns the journal line due now, if any.
    mutating func commitSucceeded(now: ContinuousClock.Instant) -> Line? {
        guard refusing else { return nil }
        defer {
            refusing = false
            failedRequests = 0; failedEvents = 0; sinceLineRequests = 0; sinceLineEvents = 0
            since = nil; lastLine = nil
        }
        return .recovered(requests: failedRequests, events: failedEvents, lasted: since.map { $0.duration(to: now) } ?? .zero)
    }

    /// The identifier's events through `through` were acknowledged: those
    /// numbers leave the ranges still to report.
    mutating func acknowledged(_ id: RestoreIdentifier, through: Int64) {
        pending[id]?.acknowledged(through: through)
        reporting?[id]?.acknowledged(through: through)
    }

    /// The identifier is gone: nothing to report for it.
    mutating func forget(_ id: RestoreIdentifier) {
        pending[id] = nil
        reporting?[id] = nil
    }

    /// The store request that counts the pending tallies as dropped, when
    /// there are some and no report is in flight; they are in flight until
    /// ``reportDone(committed:)``.
    mutating func takeReport() -> [StoreMutation]? {
        guard reporting == nil, !refusing, !pending.isEmpty else { return nil }
        reporting = pending
        pending = [:]
        return pending(of: reporting ?? [:])
    }

    private func pending(of tallies: [RestoreIdentifier: Tally]) -> [StoreMutation] {
        tallies.sorted { $0.key < $1.key }.map { .countUnstoredEvents($0.key, count: $0.value.count, range: $0.value.range) }
    }

    /// The report's commit returned: on failure its tallies are pending again.
    mutating func reportDone(committed: Bool) {
        defer { reporting = nil }
        guard !committed, let reporting else { return }
        for (id, tally) in reporting { pending[id, default: Tally()].add(tally) }
    }

    /// Whether `mutations` are a report made by ``takeReport()``.
    static func isReport(_ mutations: [StoreMutation]) -> Bool {
        mutations.contains { if case .countUnstoredEvents = $0 { true } else { false } }
    }
}
