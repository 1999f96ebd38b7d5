public import RelinkModel
/// Who wants discovery: a restore identifier's own scan, or a connection
/// intent's scan strategy (or its low-duty background scan).
public enum ScanClient: Sendable, Hashable, Codable {
    case identifier(RestoreIdentifier)
    case connection(ConnectionIntentID)
}

/// Merges every scan intent into the one discovery filter relinkd sets on
/// BlueZ, says when to start, change and stop discovery, and hands each
/// advertisement to the clients that want it, coalesced.
///
/// Coalescing: a client whose intent does not allow duplicates gets one
/// delivery per peripheral address and advertised payload per scan session
/// (from ``register(_:for:)`` of a changed intent, or after ``restart()``,
/// on): a peripheral is delivered again when what it advertises changes
/// (``Advertisement/hasSamePayload(as:)``: its name, services or data; a
/// beacon whose payload changes is news), never for its RSSI alone. A
/// client that allows duplicates gets every advertisement report. The
/// remembered addresses per client
/// are capped at ``seenLimit`` (oldest forgotten first, so a forgotten
/// peripheral may be delivered once more), keeping memory bounded over days
/// of scanning rotating addresses.
public struct ScanCoordinator: Sendable {
    /// A change of the adapter's discovery that the daemon must carry out.
    public enum Change: Sendable, Hashable {
        /// SetDiscoveryFilter(filter) then StartDiscovery.
        case start(DiscoveryFilter)
        /// SetDiscoveryFilter(filter) (discovery keeps running).
        case update(DiscoveryFilter)
        /// StopDiscovery: nothing needs scanning.
        case stop
    }

    /// Addresses remembered per client for coalescing.
    public let seenLimit: Int
    public private(set) var intents: [ScanClient: ScanIntent] = [:]
    public private(set) var filter: DiscoveryFilter?
    private var seen: [ScanClient: SeenAddresses] = [:]
    /// The merged filter's ingredients, kept as intents come and go, so a
    /// change costs the same with 10 or 10,000 intents (at start-up each
    /// pending connection registers its scan in turn).
    private var tally = FilterTally()

    public init(seenLimit: Int = 4096) {
        self.seenLimit = max(1, seenLimit)
    }

    /// True when some client needs discovery.
    public var isScanning: Bool { filter != nil }

    /// Adds or replaces the intent of `client`; returns the discovery change
    /// or nil when the merged filter is unchanged. A changed intent starts a
    /// new coalescing session for the client.
    public mutating func register(_ intent: ScanIntent, for client: ScanClient) -> Change? {
        if intents[client] != intent { seen[client] = nil }
        if let old = intents.updateValue(intent, forKey: client) { tally.remove(old) }
        tally.add(intent)
        return refilter()
    }

    /// Removes the intent of `client`; `.stop` when it was the last.
    public mutating func unregister(_ client: ScanClient) -> Change? {
        if let old = intents.removeValue(forKey: client) { tally.remove(old) }
        seen[client] = nil
        return refilter()
    }

    /// BlueZ lost discovery (bluetoothd restart, adapter power cycle): the
    /// filter must be set and discovery started again; coalescing restarts.
    public mutating func restart() -> Change? {
        seen = [:]
        return filter.map { .start($0) }
    }

    private mutating func refilter() -> Change? {
        let merged = tally.filter
        defer { filter = merged }
        switch (filter, merged) {
        case (nil, nil): return nil
        case (nil, let new?): return .start(new)
        case (_?, nil): return .stop
        case (let old?, let new?): return old == new ? nil : .update(new)
        }
    }

    /// The clients an advertisement goes to: each whose intent wants it and
    /// that has not had this peripheral with this payload yet (unless it
    /// allows duplicates).
    /// In a stable order (identifiers, then connection intents).
    public mutating func deliver(_ advertisement: Advertisement) -> [ScanClient] {
        var clients: [ScanClient] = []
        for (client, intent) in intents where intent.wants(advertisement) {
            if !intent.allowDuplicates {
                var addresses = seen[client] ?? SeenAddresses()
                let fresh = addresses.insert(advertisement.address, payload: advertisement.payloadHash, limit: seenLimit)
                seen[client] = addresses
                if !fresh { continue }
            }
            clients.append(client)
        }
        return clients.sorted(by: Self.order)
    }

    /// How many addresses are remembered for `client` (for tests and metrics).
    public func rememberedCount(for client: ScanClient) -> Int { seen[client]?.count ?? 0 }

    private static func order(_ lhs: ScanClient, _ rhs: ScanClient) -> Bool {
        switch (lhs, rhs) {
        case (.identifier(let a), .identifier(let b)): a < b
        case (.connection(let a), .connection(let b)): a < b
        case (.identifier, .connection): true
        case (.connection, .identifier): false
        }
    }
}

/// A bounded set of addresses with the payload last delivered for each,
/// forgetting the oldest address first.
struct SeenAddresses: Sendable {
    private var members: [BluetoothAddress: Int] = [:]
    private var order: [BluetoothAddress] = []
    private var head = 0

    var count: Int { members.count }

    /// Inserts or updates; false when already present with this payload.
    /// Keeps at most `limit` entries.
    mutating func insert(_ address: BluetoothAddress, payload: Int, limit: Int) -> Bool {
        if let known = members.updateValue(payload, forKey: address) { return known != payload }
        order.append(address)
        while members.count > limit {
            members[order[head]] = nil
            head += 1
        }
        if head > limit {
            order.removeFirst(head)
            head = 0
        }
        return true
    }
}

/// What ``DiscoveryFilter/merging(_:)`` computes from every intent, kept as
/// counts so that adding or removing one intent is cheap.
struct FilterTally: Sendable {
    private var count = 0
    /// Intents that want every peripheral (no services).
    private var everything = 0
    private var serviceCounts: [BluetoothUUID: Int] = [:]
    /// The services of the intents that name some, as a set.
    private var services: Set<BluetoothUUID> = []
    private var duplicates = 0
    private var withoutRSSI = 0
    private var rssiCounts: [Int16: Int] = [:]
    private var notLowDuty = 0

    mutating func add(_ intent: ScanIntent) { apply(intent, 1) }
    mutating func remove(_ intent: ScanIntent) { apply(intent, -1) }

    private mutating func apply(_ intent: ScanIntent, _ delta: Int) {
        count += delta
        if intent.services.isEmpty { everything += delta }
        for service in intent.services {
            let n = serviceCounts[service, default: 0] + delta
            serviceCounts[service] = n > 0 ? n : nil
            if n > 0 { services.insert(service) } else { services.remove(service) }
        }
        if intent.allowDuplicates { duplicates += delta }
        if let rssi = intent.minimumRSSI {
            let n = rssiCounts[rssi, default: 0] + delta
            rssiCounts[rssi] = n > 0 ? n : nil
        } else {
            withoutRSSI += delta
        }
        if !intent.lowDuty { notLowDuty += delta }
    }

    /// The merged filter; nil when there is no intent.
    var filter: DiscoveryFilter? {
        guard count > 0 else { return nil }
        return DiscoveryFilter(services: everything > 0 ? [] : services, duplicateData: duplicates > 0,
                               minimumRSSI: withoutRSSI > 0 ? nil : rssiCounts.keys.min(), lowDuty: notLowDuty == 0)
    }
}
