/// Rate-limits a property signal per key, leading and trailing edge: the
/// first change of a quiet key is signalled at once and opens a window of
/// `interval`; changes within the window are signalled once, when it ends,
/// which opens the next window. So a key changing once (a lock's event) is
/// signalled without delay, a key changing at every notified value (a
/// streaming band) at most once per `interval`, and the last change is
/// always signalled.
///
/// Pure: the caller reads the time and arms a timer for each window end.
struct SignalThrottle<Key: Hashable & Sendable, Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    let interval: Duration
    /// Keys in a window: when it ends, and whether a change came within it.
    private var windows: [Key: (end: Instant, changed: Bool)] = [:]

    init(interval: Duration) {
        self.interval = interval
    }

    enum Decision: Equatable {
        /// Signal now; arm a timer for `windowEnd`.
        case signal(windowEnd: Instant)
        /// Nothing now: the end of the current window signals it.
        case deferred
    }

    /// `key` changed at `now`.
    mutating func changed(_ key: Key, at now: Instant) -> Decision {
        if var window = windows[key] {
            window.changed = true
            windows[key] = window
            return .deferred
        }
        let end = now.advanced(by: interval)
        windows[key] = (end, false)
        return .signal(windowEnd: end)
    }

    /// The window of `key` ended (its timer fired at `now`). Returns the
    /// next window's end when a signal is due now (a change came within the
    /// window), nil when the key is quiet again.
    mutating func windowEnded(_ key: Key, at now: Instant) -> Instant? {
        guard let window = windows[key] else { return nil }
        guard window.changed else {
            windows[key] = nil
            return nil
        }
        let end = now.advanced(by: interval)
        windows[key] = (end, false)
        return end
    }

    /// Forgets `key` (its object is gone).
    mutating func remove(_ key: Key) {
        windows[key] = nil
    }

    /// Keys in a window.
    var active: Int { windows.count }
}
