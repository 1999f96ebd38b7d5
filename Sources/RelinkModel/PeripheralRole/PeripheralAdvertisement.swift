/// What a program advertises through relinkd's peripheral role
/// (CoreBluetooth's `startAdvertising` dictionary, and what BlueZ's
/// `LEAdvertisement1` offers): relinkd registers it with bluetoothd.
///
/// Its manufacturer data, service data and appearance are an
/// ``AdvertisingData``, the one type for advertising data in both roles
/// (what a central sees in `discovered` events, what a program advertises
/// here); the rest is what only an advertiser says: the Local Name, the
/// service UUID list, and the switches bluetoothd turns into the Flags, the
/// TX power field and the advertising type.
public struct PeripheralAdvertisement: Sendable, Hashable {
    /// The Local Name (`CBAdvertisementDataLocalNameKey`).
    public var localName: String?
    /// Service UUIDs (`CBAdvertisementDataServiceUUIDsKey`).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer data, service data and appearance. Its `txPower`,
    /// `flags` and `raw` are not advertised as given (bluetoothd fills the TX
    /// power and the Flags itself): ``validate()`` refuses them.
    public var data: AdvertisingData
    /// Whether the controller's TX power level is included.
    public var includeTxPower: Bool
    /// Whether the advertisement says "LE General Discoverable". A
    /// broadcast (not ``connectable``) advertisement cannot be: the Core
    /// Specification forbids a broadcaster the discoverable flags and
    /// bluetoothd refuses such an advertisement ("Broadcast cannot set
    /// flags"); ``validate()`` refuses it.
    public var discoverable: Bool
    /// Whether centrals may connect (BlueZ's `Type` `peripheral`) or not (`broadcast`).
    public var connectable: Bool

    /// An advertisement; `discoverable` left out is `connectable` (a
    /// connectable advertisement is discoverable, a broadcast one is not).
    public init(localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [], data: AdvertisingData = AdvertisingData(),
                includeTxPower: Bool = false, discoverable: Bool? = nil, connectable: Bool = true) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.data = data
        self.includeTxPower = includeTxPower
        self.discoverable = discoverable ?? connectable
        self.connectable = connectable
    }

    /// The `Discoverable` bluetoothd is given: never for a broadcast
    /// advertisement, which bluetoothd would refuse whole. An advertisement
    /// stored before ``validate()`` refused the pair is still advertised.
    public var advertisedDiscoverable: Bool { discoverable && connectable }

    /// What a legacy advertising PDU carries: 31 bytes of AD structures.
    public static let legacyLimit = 31

    /// The bytes of its AD structures, as bluetoothd lays them out: flags
    /// (3), each list of 16-bit and of 128-bit service UUIDs (2 + 2 or 16
    /// each), manufacturer data (4 + length each), service data (2 + UUID +
    /// length each), appearance (4), TX power (3), the Local Name (2 +
    /// length).
    public var encodedLength: Int {
        func isShort(_ uuid: BluetoothUUID) -> Bool { uuid.shortValue.map { $0 <= 0xFFFF } ?? false }
        var length = advertisedDiscoverable || connectable ? 3 : 0
        let short = serviceUUIDs.filter(isShort).count
        let long = serviceUUIDs.count - short
        if short > 0 { length += 2 + 2 * short }
        if long > 0 { length += 2 + 16 * long }
        for (_, bytes) in data.manufacturerData { length += 4 + bytes.count }
        for (uuid, bytes) in data.serviceData { length += 2 + (isShort(uuid) ? 2 : 16) + bytes.count }
        if data.appearance != nil { length += 4 }
        if includeTxPower { length += 3 }
        if let localName { length += 2 + localName.utf8.count }
        return length
    }

    /// Checks what a controller would refuse.
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)`` naming the problem:
    ///   duplicate service UUIDs, a TX power level, flags or raw AD
    ///   structures in ``data`` (bluetoothd writes those itself), a
    ///   broadcast advertisement that is discoverable, or more than
    ///   ``legacyLimit`` bytes.
    public func validate() throws(DomainError) {
        guard Set(serviceUUIDs).count == serviceUUIDs.count else { throw .invalidPeripheralRole("the advertisement lists a service UUID twice") }
        guard connectable || !discoverable else {
            throw .invalidPeripheralRole("a broadcast (not connectable) advertisement cannot be discoverable: "
                                         + "a broadcaster may not set the discoverable flags, and bluetoothd refuses it")
        }
        guard data.txPower == nil, data.flags == nil, data.raw.isEmpty else {
            throw .invalidPeripheralRole("an advertisement's TX power, flags and raw AD structures are bluetoothd's: use includeTxPower and discoverable")
        }
        guard encodedLength <= Self.legacyLimit else {
            throw .invalidPeripheralRole("the advertisement needs \(encodedLength) bytes and a legacy advertisement holds \(Self.legacyLimit)")
        }
    }
}
