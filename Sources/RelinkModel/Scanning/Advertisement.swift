/// One advertisement report of a peripheral, as the BlueZ layer sees it
/// during discovery (Device1 properties at the time of the report).
public struct Advertisement: Sendable, Hashable, Codable {
    /// The peripheral's address.
    public var address: BluetoothAddress
    /// The Local Name, when the advertisement or scan response carried one.
    public var localName: String?
    /// The service UUIDs it advertises.
    public var serviceUUIDs: Set<BluetoothUUID>
    /// Manufacturer data, service data, TX power, appearance, flags and the
    /// raw advertising data.
    public var data: AdvertisingData
    /// The report's RSSI (dBm), when known.
    public var rssi: Int16?

    /// A report.
    public init(address: BluetoothAddress, localName: String? = nil, serviceUUIDs: Set<BluetoothUUID> = [],
                data: AdvertisingData = AdvertisingData(), rssi: Int16? = nil) {
        self.address = address
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.data = data
        self.rssi = rssi
    }

    /// Whether `other` advertises the same thing: every field but the RSSI
    /// (and the address) equal. A scan without duplicates reports a
    /// peripheral again when this changes (a beacon whose payload changes
    /// is news), never for an RSSI alone.
    public func hasSamePayload(as other: Advertisement) -> Bool {
        localName == other.localName && serviceUUIDs == other.serviceUUIDs && data == other.data
    }

    /// A hash of what ``hasSamePayload(as:)`` compares (for remembering it
    /// in constant space).
    public var payloadHash: Int {
        var hasher = Hasher()
        hasher.combine(localName)
        hasher.combine(serviceUUIDs)
        hasher.combine(data)
        return hasher.finalize()
    }
}
