/// A discovery filter: what relinkd asks of an adapter's scan
/// (`Adapter1.SetDiscoveryFilter`), merged from every scan intent by
/// ``merging(_:)``. The BlueZ layer turns it into the method's argument.
public struct DiscoveryFilter: Sendable, Hashable, Codable {
    /// BlueZ's `Transport`.
    public enum Transport: String, Sendable, Hashable, Codable {
        /// Both, as the adapter supports.
        case auto
        /// BR/EDR inquiry only.
        case bredr
        /// LE scanning only (relink's case).
        case le
    }

    /// `UUIDs`: services to look for; empty means all peripherals (BlueZ's own rule).
    public var services: Set<BluetoothUUID>
    /// `DuplicateData`: report every advertisement; true when any intent allows duplicates.
    public var duplicateData: Bool
    /// `RSSI`: only devices at least this strong (dBm); merged as the lowest
    /// limit of all intents, nil when any has none. Not with ``pathloss``.
    public var minimumRSSI: Int16?
    /// `Pathloss`: only devices within this path loss (dB). Not with ``minimumRSSI``.
    public var pathloss: UInt16?
    /// `Transport`.
    public var transport: Transport
    /// `Discoverable`: only discoverable devices.
    public var discoverable: Bool?
    /// `Pattern`: prefix of the address or name.
    public var pattern: String?
    /// True only when every intent is a low-duty background scan (relinkd's
    /// own notion; not sent to BlueZ).
    public var lowDuty: Bool

    /// A filter; LE transport unless told otherwise.
    public init(services: Set<BluetoothUUID> = [], duplicateData: Bool = false, minimumRSSI: Int16? = nil,
                pathloss: UInt16? = nil, transport: Transport = .le, discoverable: Bool? = nil,
                pattern: String? = nil, lowDuty: Bool = false) {
        self.services = services
        self.duplicateData = duplicateData
        self.minimumRSSI = minimumRSSI
        self.pathloss = pathloss
        self.transport = transport
        self.discoverable = discoverable
        self.pattern = pattern
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
