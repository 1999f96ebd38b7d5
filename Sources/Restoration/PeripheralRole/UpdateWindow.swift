/// Flow control of one identifier's updates to subscribed centrals
/// (CoreBluetooth's `updateValue` returning false, then
/// `peripheralManagerIsReadyToUpdateSubscribers`): at most ``capacity``
/// updates handed to bluetoothd and not yet sent; one more is refused,
/// and once one of them has gone out after a refusal, the program is told
/// there is room (once per refusal streak).
public struct UpdateWindow: Sendable, Hashable {
    /// How many updates may be in flight at once.
    public let capacity: Int
    /// How many are in flight now.
    public private(set) var inFlight = 0
    /// Whether an update was refused since the last "ready" was told.
    public private(set) var refused = false

    /// A window of `capacity` updates (at least one).
    public init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Takes a place for one update; false (and remembered) when full.
    public mutating func take() -> Bool {
        guard inFlight < capacity else {
            refused = true
            return false
        }
        inFlight += 1
        return true
    }

    /// A place taken for an update that was not sent after all (its value
    /// could not be kept): free again, and no "ready" is owed for it.
    public mutating func giveBack() {
        inFlight = max(0, inFlight - 1)
    }

    /// An update has gone out (or failed): its place is free. True when
    /// the program must now be told there is room (an update was refused
    /// since it was last told).
    public mutating func sent() -> Bool {
        inFlight = max(0, inFlight - 1)
        guard refused else { return false }
        refused = false
        return true
    }
}

/// Requests handed to the program and not yet answered, each with the
/// instant after which relinkd answers it itself.
public struct PendingRequests<Instant: Comparable & Sendable>: Sendable {
    /// One request.
    public struct Entry: Sendable {
        /// Whose request it is (the restore identifier's raw value).
        public var identifier: String
        /// When relinkd gives up waiting for the program.
        public var deadline: Instant
    }

    private var entries: [UInt64: Entry] = [:]
    private var next: UInt64 = 1

    /// No request.
    public init() {}

    /// Adds a request; returns its number (never zero, never reused).
    public mutating func add(identifier: String, deadline: Instant) -> UInt64 {
        let number = next
        next += 1
        entries[number] = Entry(identifier: identifier, deadline: deadline)
        return number
    }

    /// Takes a request out when `identifier` owns it; nil for a number that
    /// was never handed out, was answered already, timed out, or is
    /// another identifier's.
    public mutating func answer(_ number: UInt64, by identifier: String) -> Entry? {
        guard let entry = entries[number], entry.identifier == identifier else { return nil }
        entries[number] = nil
        return entry
    }

    /// Takes out a request whose deadline has passed at `now`.
    public mutating func expire(_ number: UInt64, now: Instant) -> Entry? {
        guard let entry = entries[number], entry.deadline <= now else { return nil }
        entries[number] = nil
        return entry
    }

    /// The numbers of `identifier`'s requests, in order.
    public func numbers(of identifier: String) -> [UInt64] { entries.filter { $0.value.identifier == identifier }.keys.sorted() }

    /// How many requests wait.
    public var count: Int { entries.count }
}
