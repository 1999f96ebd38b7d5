public import RelinkModel

/// The policy for a link that is up while a subscribed characteristic is not
/// (yet) among its GATT objects: wait for it, and if it has not appeared
/// after ``period``, reconnect the link so that bluetoothd discovers
/// services afresh, at most ``retryLimit`` times in a row per peripheral.
///
/// Pure: the daemon tells it what happened and carries out what it
/// answers (a timer for ``period``, a `Disconnect`).
public struct GattGrace: Sendable, Hashable {
    /// How long a resolved link may lack a subscribed characteristic.
    public static let period: Duration = .seconds(3)
    /// At most this many reconnections in a row for one peripheral; then only waiting.
    public static let retryLimit = 3

    /// What a grace timer's end calls for.
    public enum Verdict: Sendable, Hashable {
        /// The timer is stale (the characteristic appeared, the link went down, a newer wait began).
        case stale
        /// Look again: arm what is there now (``stillMissing(_:linkUp:)`` decides the rest).
        case lookAgain
    }

    /// After looking again, what to do about a characteristic still missing.
    public enum Decision: Sendable, Hashable {
        /// Reconnect to make bluetoothd rediscover services (this is attempt `n`, from 1).
        case rediscover(attempt: Int)
        /// Only wait for it (the limit is reached, or the link is not up).
        case wait
    }

    private var awaiting: [PeripheralID: UInt64] = [:]
    private var generation: UInt64 = 0
    private var retries: [PeripheralID: Int] = [:]

    /// No peripheral awaited.
    public init() {}

    /// Whether any peripheral is awaited.
    public var isWaiting: Bool { !awaiting.isEmpty }

    /// Whether `peripheral` is awaited.
    public func isWaiting(for peripheral: PeripheralID) -> Bool { awaiting[peripheral] != nil }

    /// How many peripherals are awaited.
    public var waitingCount: Int { awaiting.count }

    /// A subscribed characteristic is missing on `peripheral`'s link: starts
    /// waiting. Returns the generation the daemon's timer must report back,
    /// nil when a wait is already running.
    public mutating func wait(for peripheral: PeripheralID) -> UInt64? {
        guard awaiting[peripheral] == nil else { return nil }
        generation += 1
        awaiting[peripheral] = generation
        return generation
    }

    /// GATT objects appeared on `peripheral`'s link: returns true when it
    /// was awaited (the daemon arms its subscriptions now).
    public mutating func appeared(on peripheral: PeripheralID) -> Bool {
        awaiting.removeValue(forKey: peripheral) != nil
    }

    /// The timer of `generation` for `peripheral` ended.
    public mutating func timerEnded(for peripheral: PeripheralID, generation: UInt64) -> Verdict {
        guard awaiting[peripheral] == generation else { return .stale }
        awaiting[peripheral] = nil
        return .lookAgain
    }

    /// The characteristic is still missing after looking again (the look
    /// started a new wait). Counts an attempt when it reconnects.
    public mutating func stillMissing(_ peripheral: PeripheralID, linkUp: Bool) -> Decision {
        let done = retries[peripheral, default: 0]
        guard linkUp, done < Self.retryLimit else { return .wait }
        retries[peripheral] = done + 1
        return .rediscover(attempt: done + 1)
    }

    /// Notifications were armed on `peripheral`: its attempts start over.
    public mutating func armed(_ peripheral: PeripheralID) { retries[peripheral] = nil }

    /// The link of `peripheral` went down: nothing is awaited on it.
    public mutating func linkDown(_ peripheral: PeripheralID) { awaiting[peripheral] = nil }

    /// Every link went (bluetoothd or the adapter): nothing is awaited.
    public mutating func reset() { awaiting = [:] }
}
