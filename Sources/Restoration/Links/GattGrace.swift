public import RelinkModel

/// The policy for a link that is up while a subscribed characteristic is not
/// (yet) among its GATT objects: wait for it, and if it has not appeared
/// after ``period``, decide by what the link shows (``Absence``):
///
/// * the GATT database is known and lacks it (``Absence/notInDatabase``: a
///   typo in a UUID, or a peripheral whose firmware changed): the
///   subscription **fails** at once, without touching the link (the daemon
///   removes it and tells its identifiers with a `subscription-failed`
///   event);
/// * the database is not known yet (services not resolved, or its service
///   not seen): reconnect the link so that bluetoothd discovers services
///   afresh. A characteristic **confirmed** on this peripheral (armed since
///   relinkd started, or subscribed before it started) is waited for: at
///   most ``retryLimit`` reconnections in a row, one look (``period``)
///   apart; after those, reconnections with a back-off
///   (``lateRediscoveryLooks(_:)``: 30 s, 1, 2, 4, 8 min, then every
///   15 min), never none: a link whose subscription never arms carries
///   nothing, and waiting alone left a lock like that for good (gateway
///   finding G8). One never confirmed gets ``unconfirmedRetryLimit``
///   reconnection; still missing after it, its subscription fails.
///
/// Reconnections are counted per characteristic, since it was last armed:
/// arming another characteristic of the same peripheral does not start the
/// count over (it did, and a typo reconnected a lock every 3 s for ever).
///
/// Pure: the daemon tells it what happened and carries out what it
/// answers (a timer for ``period``, a `Disconnect`, a failed subscription).
public struct GattGrace: Sendable, Hashable {
    /// How long a resolved link may lack a subscribed characteristic.
    public static let period: Duration = .seconds(3)
    /// At most this many reconnections in a row for a confirmed
    /// characteristic; then only waiting.
    public static let retryLimit = 3
    /// At most this many reconnections for a characteristic never confirmed;
    /// then its subscription fails.
    public static let unconfirmedRetryLimit = 1

    /// After ``retryLimit`` reconnections in a row, the looks (each one
    /// ``period``) to wait before the reconnection after `late` more:
    /// 10, 20, 40, 80, 160, then 300 (30 s up to 15 min).
    public static func lateRediscoveryLooks(_ late: Int) -> Int { min(10 << min(max(late, 0), 5), 300) }

    /// What a grace timer's end calls for.
    public enum Verdict: Sendable, Hashable {
        /// The timer is stale (the characteristic appeared, the link went down, a newer wait began).
        case stale
        /// Look again: arm what is there now (``stillMissing(_:_:linkUp:)`` decides the rest).
        case lookAgain
    }

    /// What the link shows of a subscribed characteristic that has no
    /// object on it (``absence(servicesResolved:characteristicsOfService:)``).
    public enum Absence: Sendable, Hashable {
        /// Services are resolved and the characteristics of its service
        /// are there, without it: the GATT database is known and lacks it.
        case notInDatabase
        /// Services are not resolved, or no characteristic of its service
        /// is seen: the database is not known yet.
        case databaseNotKnown
    }

    /// After looking again, what to do about characteristics still missing.
    public enum Decision: Sendable, Hashable {
        /// Reconnect to make bluetoothd rediscover services (this is attempt `n`, from 1).
        case rediscover(attempt: Int)
        /// The reconnections in a row are spent: wait `looksLeft` more looks,
        /// then reconnect again; `first` on the first look of such a wait
        /// (the daemon says so once, not at every look).
        case rediscoverLater(looksLeft: Int, first: Bool)
        /// Only wait for them (the link is not up).
        case wait
    }

    /// The answer of ``stillMissing(_:_:linkUp:)``.
    public struct Outcome: Sendable, Hashable {
        /// The characteristics whose subscriptions fail, sorted: the daemon
        /// removes them and reports `subscription-failed` to each identifier.
        public var failed: [CharacteristicKey]
        /// What to do about the others; nil when none is left to wait for.
        public var decision: Decision?

        /// An outcome.
        public init(failed: [CharacteristicKey], decision: Decision?) {
            self.failed = failed
            self.decision = decision
        }
    }

    private var awaiting: [PeripheralID: UInt64] = [:]
    private var generation: UInt64 = 0
    /// Reconnections made while each characteristic was missing, since it was last armed.
    private var retries: [PeripheralID: [CharacteristicKey: Int]] = [:]
    /// Characteristics known to exist on each peripheral (``confirm(_:_:)``).
    private var confirmed: [PeripheralID: Set<CharacteristicKey>] = [:]
    /// Looks since the last reconnection, on peripherals past ``retryLimit``.
    private var looks: [PeripheralID: Int] = [:]
    /// Missing characteristics already reported (``reportMissing(_:_:)``).
    private var reported: [PeripheralID: Set<CharacteristicKey>] = [:]

    /// No peripheral awaited.
    public init() {}

    /// What a missing characteristic's absence says, from the link's state:
    /// `characteristicsOfService` are the UUIDs of the characteristics seen
    /// in the services with its service's UUID (empty when none is seen).
    public static func absence(servicesResolved: Bool, characteristicsOfService: Set<BluetoothUUID>) -> Absence {
        servicesResolved && !characteristicsOfService.isEmpty ? .notInDatabase : .databaseNotKnown
    }

    /// The failure a characteristic's absence is reported with: `UnknownCharacteristic`, not supported.
    public static func unknownCharacteristic(_ key: CharacteristicKey, _ absence: GattGrace.Absence) -> ConnectionFailure {
        let why = switch absence {
        case .notInDatabase: "services are resolved and service \(key.service) has no characteristic \(key.characteristic)"
        case .databaseNotKnown: "service \(key.service) with characteristic \(key.characteristic) was not found, also after rediscovering services"
        }
        return ConnectionFailure(.notSupported, errorName: RelinkErrorName.unknownCharacteristic.rawValue, message: why)
    }

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

    /// The characteristics in `missing` are still not on `peripheral`'s
    /// link after looking again (the look started a new wait). Counts a
    /// reconnection for each one waited for when it answers `rediscover`.
    public mutating func stillMissing(_ peripheral: PeripheralID, _ missing: [CharacteristicKey: Absence], linkUp: Bool) -> Outcome {
        guard linkUp else { return Outcome(failed: [], decision: missing.isEmpty ? nil : .wait) }
        var failed: [CharacteristicKey] = [], awaited: [CharacteristicKey] = []
        for (key, absence) in missing.sorted(by: { $0.key < $1.key }) {
            let isConfirmed = confirmed[peripheral]?.contains(key) == true
            let done = retries[peripheral]?[key] ?? 0
            if absence == .notInDatabase || (!isConfirmed && done >= Self.unconfirmedRetryLimit) {
                failed.append(key)
                forget(peripheral, key)
            } else {
                awaited.append(key)
            }
        }
        guard !awaited.isEmpty else { return Outcome(failed: failed, decision: nil) }
        let budgeted = awaited.filter { key in
            let limit = confirmed[peripheral]?.contains(key) == true ? Self.retryLimit : Self.unconfirmedRetryLimit
            return (retries[peripheral]?[key] ?? 0) < limit
        }
        if budgeted.isEmpty {
            // Every one awaited is confirmed and past its reconnections in a row.
            let made = awaited.map { retries[peripheral]?[$0] ?? 0 }.min() ?? Self.retryLimit
            let due = Self.lateRediscoveryLooks(made - Self.retryLimit)
            let looked = (looks[peripheral] ?? 0) + 1
            guard looked >= due else {
                looks[peripheral] = looked
                return Outcome(failed: failed, decision: .rediscoverLater(looksLeft: due - looked, first: looked == 1))
            }
        }
        looks[peripheral] = 0
        let attempt = 1 + (awaited.map { retries[peripheral]?[$0] ?? 0 }.min() ?? 0)
        for key in awaited { retries[peripheral, default: [:]][key, default: 0] += 1 }
        return Outcome(failed: failed, decision: .rediscover(attempt: attempt))
    }

    /// Whether the missing `key` on `peripheral` is to be reported now:
    /// true once until it is armed or forgotten (the daemon looks every
    /// ``period``; the journal hears of it once).
    public mutating func reportMissing(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> Bool {
        reported[peripheral, default: []].insert(key).inserted
    }

    /// `key` is known to exist on `peripheral`: it was armed, or subscribed
    /// before relinkd started (relinkd cannot tell whether an earlier run
    /// armed it, so it does not drop it on a database it does not know).
    public mutating func confirm(_ peripheral: PeripheralID, _ key: CharacteristicKey) {
        confirmed[peripheral, default: []].insert(key)
    }

    /// Whether `key` is confirmed on `peripheral` (``confirm(_:_:)``).
    public func isConfirmed(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> Bool {
        confirmed[peripheral]?.contains(key) == true
    }

    /// Notifications were armed for `key` on `peripheral`: confirmed, and
    /// its reconnections start over.
    public mutating func armed(_ peripheral: PeripheralID, _ key: CharacteristicKey) {
        confirm(peripheral, key)
        clearCounts(peripheral, key)
    }

    private mutating func clearCounts(_ peripheral: PeripheralID, _ key: CharacteristicKey) {
        retries[peripheral]?[key] = nil
        if retries[peripheral]?.isEmpty == true {
            retries[peripheral] = nil
            looks[peripheral] = nil
        }
        reported[peripheral]?.remove(key)
        if reported[peripheral]?.isEmpty == true { reported[peripheral] = nil }
    }

    /// Nobody subscribes to `key` on `peripheral` any more: forgotten.
    public mutating func forget(_ peripheral: PeripheralID, _ key: CharacteristicKey) {
        clearCounts(peripheral, key)
        confirmed[peripheral]?.remove(key)
        if confirmed[peripheral]?.isEmpty == true { confirmed[peripheral] = nil }
    }

    /// The link of `peripheral` went down, or nothing is missing on it any
    /// more (its missing subscriptions failed): nothing is awaited on it.
    public mutating func stopWaiting(for peripheral: PeripheralID) { awaiting[peripheral] = nil }

    /// Every link went (bluetoothd or the adapter): nothing is awaited.
    public mutating func reset() { awaiting = [:] }
}
