/// The one discovery filter relinkd sets on the adapter (SetDiscoveryFilter),
/// merged from every scan intent by ``ScanCoordinator``.
public struct DiscoveryFilter: Sendable, Hashable, Codable {
    /// UUIDs to filter on; empty means all peripherals (BlueZ's own rule).
    public var services: Set<BluetoothUUID>
    /// BlueZ `DuplicateData`: true when any intent allows duplicates.
    public var duplicateData: Bool
    /// BlueZ `RSSI`: the lowest limit of all intents, nil when any has none.
    public var minimumRSSI: Int16?
    /// True only when every intent is a low-duty background scan.
    public var lowDuty: Bool

    public init(services: Set<BluetoothUUID> = [], duplicateData: Bool = false, minimumRSSI: Int16? = nil, lowDuty: Bool = false) {
        self.services = services
        self.duplicateData = duplicateData
        self.minimumRSSI = minimumRSSI
        self.lowDuty = lowDuty
    }

    /// Merges intents by the rules above. `nil` when there is no intent
    /// (nothing needs scanning).
    public static func merging<S: Sequence<ScanIntent>>(_ intents: S) -> DiscoveryFilter? {
        var iterator = intents.makeIterator()
        guard let first = iterator.next() else { return nil }
        var filter = DiscoveryFilter(services: first.services, duplicateData: first.allowDuplicates, minimumRSSI: first.minimumRSSI, lowDuty: first.lowDuty)
        var everything = first.services.isEmpty
        while let intent = iterator.next() {
            everything = everything || intent.services.isEmpty
            filter.services.formUnion(intent.services)
            filter.duplicateData = filter.duplicateData || intent.allowDuplicates
            if let limit = filter.minimumRSSI, let other = intent.minimumRSSI {
                filter.minimumRSSI = min(limit, other)
            } else {
                filter.minimumRSSI = nil
            }
            filter.lowDuty = filter.lowDuty && intent.lowDuty
        }
        if everything { filter.services = [] }
        return filter
    }
}
