public import RelinkModel

/// When programs are told the state of relinkd's adapter (``AdapterStatus``):
/// CoreBluetooth's `centralManagerDidUpdateState`, made durable.
///
/// * Every change of the status while relinkd runs is announced: an
///   `adapter-state` event to every identifier, stored with the status.
/// * At start-up the status is announced only when it differs from the
///   last one stored (none stored counts as different): a relinkd restart
///   with the adapter as it was adds nothing to any outbox, and one that
///   finds it changed (powered off, unplugged while relinkd was down)
///   leaves every outbox ending with the status that holds. A program
///   starts from `Register`'s restored state, which carries the status
///   now, and then follows the events.
///
/// Pure: the daemon tells it each status the BlueZ layer reports, and
/// carries out an announcement (events, the store, `Manager1`, the journal).
public struct AdapterWatch: Sendable, Hashable {
    /// The status now; nil until ``start(_:lastAnnounced:)``.
    public private(set) var current: AdapterStatus?

    /// A watch that has seen nothing yet.
    public init() {}

    /// A status to tell programs of, with the one it follows.
    public struct Announcement: Sendable, Hashable {
        /// The new status.
        public var status: AdapterStatus
        /// The status before it (the stored one at start-up); nil when none was known.
        public var previous: AdapterStatus?

        /// An announcement of `status`, after `previous`.
        public init(status: AdapterStatus, previous: AdapterStatus?) {
            self.status = status
            self.previous = previous
        }
    }

    /// At start-up: the status now and the last one announced (stored).
    /// Returns what to announce, nil when the status is the stored one.
    public mutating func start(_ status: AdapterStatus, lastAnnounced stored: AdapterStatus?) -> Announcement? {
        current = status
        return status == stored ? nil : Announcement(status: status, previous: stored)
    }

    /// A status the BlueZ layer reported while relinkd runs. Returns what
    /// to announce, nil when it is the current one.
    public mutating func observe(_ status: AdapterStatus) -> Announcement? {
        guard status != current else { return nil }
        defer { current = status }
        return Announcement(status: status, previous: current)
    }
}
