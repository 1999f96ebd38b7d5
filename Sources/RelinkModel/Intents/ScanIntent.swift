/// What one client of discovery wants: a restore identifier's own scan (as
/// `scanForPeripheralsWithServices:options:`) or a connection intent's scan
/// strategy.
public struct ScanIntent: Sendable, Hashable, Codable {
    /// Service UUIDs to scan for; empty means every peripheral.
    public var services: Set<BluetoothUUID>
    /// Report every advertisement instead of one discovery per peripheral
    /// (CBCentralManagerScanOptionAllowDuplicatesKey).
    public var allowDuplicates: Bool
    /// Only report advertisements at or above this RSSI (dBm); nil: no limit.
    public var minimumRSSI: Int16?
    /// A background scan that may run at low duty (used by "pending until
    /// cancelled" intents without a device for background auto-connect).
    public var lowDuty: Bool
    /// Manufacturer- and service-data prefixes: when any is given, only
    /// advertisements that match at least one of them (relinkd's own
    /// filter: BlueZ's discovery filter has none).
    public var dataPrefixes: Set<AdvertisingDataPrefix>

    /// A scan intent.
    public init(services: Set<BluetoothUUID> = [], allowDuplicates: Bool = false, minimumRSSI: Int16? = nil, lowDuty: Bool = false,
                dataPrefixes: Set<AdvertisingDataPrefix> = []) {
        self.services = services
        self.dataPrefixes = dataPrefixes
        self.allowDuplicates = allowDuplicates
        self.minimumRSSI = minimumRSSI
        self.lowDuty = lowDuty
    }

    /// Whether an advertisement is of interest to this intent: its RSSI is
    /// above the limit, it advertises one of `services` (or `services` is
    /// empty), and its data matches one of `dataPrefixes` (or there is none).
    public func wants(_ advertisement: Advertisement) -> Bool {
        if let minimumRSSI, let rssi = advertisement.rssi, rssi < minimumRSSI { return false }
        guard services.isEmpty || !services.isDisjoint(with: advertisement.serviceUUIDs) else { return false }
        return dataPrefixes.isEmpty || dataPrefixes.contains { $0.matches(advertisement.data) }
    }
}
