/// One advertisement report of a peripheral, as the BlueZ layer sees it
/// during discovery (Device1 properties at the time of the report).
public struct Advertisement: Sendable, Hashable, Codable {
    public var address: BluetoothAddress
    /// The Local Name, when the advertisement or scan response carried one.
    public var localName: String?
    public var serviceUUIDs: Set<BluetoothUUID>
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]
    public var rssi: Int16?

    public init(address: BluetoothAddress, localName: String? = nil, serviceUUIDs: Set<BluetoothUUID> = [], manufacturerData: [UInt16: [UInt8]] = [:], rssi: Int16? = nil) {
        self.address = address
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.rssi = rssi
    }
}
