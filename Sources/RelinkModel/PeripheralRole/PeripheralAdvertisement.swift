/// What a program advertises through relinkd's peripheral role
/// (CoreBluetooth's `startAdvertising` dictionary, and what BlueZ's
/// `LEAdvertisement1` offers): relinkd registers it with bluetoothd.
///
/// Defined here for the peripheral role alone; the advertising data of
/// `discovered` events (issue 22) is a separate, central-side type for now.
public struct PeripheralAdvertisement: Sendable, Hashable {
    /// The Local Name (`CBAdvertisementDataLocalNameKey`).
    public var localName: String?
    /// Service UUIDs (`CBAdvertisementDataServiceUUIDsKey`).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// The GAP appearance, if any.
    public var appearance: UInt16?
    /// Whether the controller's TX power level is included.
    public var includeTxPower: Bool
    /// Whether the advertisement says "LE General Discoverable".
    public var discoverable: Bool
    /// Whether centrals may connect (BlueZ's `Type` `peripheral`) or not (`broadcast`).
    public var connectable: Bool

    /// An advertisement.
    public init(localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: [UInt8]] = [:],
                serviceData: [BluetoothUUID: [UInt8]] = [:], appearance: UInt16? = nil, includeTxPower: Bool = false,
                discoverable: Bool = true, connectable: Bool = true) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.appearance = appearance
        self.includeTxPower = includeTxPower
        self.discoverable = discoverable
        self.connectable = connectable
    }

    /// What a legacy advertising PDU carries: 31 bytes of AD structures.
    public static let legacyLimit = 31

    /// The bytes of its AD structures, as bluetoothd lays them out: flags
    /// (3), each list of 16-bit and of 128-bit service UUIDs (2 + 2 or 16
    /// each), manufacturer data (4 + length each), service data (2 + UUID +
    /// length each), appearance (4), TX power (3), the Local Name (2 +
    /// length).
    public var encodedLength: Int {
        var length = discoverable || connectable ? 3 : 0
        let short = serviceUUIDs.filter { $0.shortValue.map { $0 <= 0xFFFF } ?? false }
        let long = serviceUUIDs.count - short.count
        if !short.isEmpty { length += 2 + 2 * short.count }
        if long > 0 { length += 2 + 16 * long }
        for (_, bytes) in manufacturerData { length += 4 + bytes.count }
        for (uuid, bytes) in serviceData { length += 2 + (uuid.shortValue.map { $0 <= 0xFFFF } ?? false ? 2 : 16) + bytes.count }
        if appearance != nil { length += 4 }
        if includeTxPower { length += 3 }
        if let localName { length += 2 + localName.utf8.count }
        return length
    }

    /// Checks what a controller would refuse.
    /// - Throws: ``DomainError/invalidOptions(_:)`` naming the problem:
    ///   duplicate service UUIDs, or more than ``legacyLimit`` bytes.
    public func validate() throws(DomainError) {
        guard Set(serviceUUIDs).count == serviceUUIDs.count else { throw .invalidOptions("the advertisement lists a service UUID twice") }
        guard encodedLength <= Self.legacyLimit else {
            throw .invalidOptions("the advertisement needs \(encodedLength) bytes and a legacy advertisement holds \(Self.legacyLimit)")
        }
    }
}
