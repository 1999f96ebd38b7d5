public import RelinkModel

/// A peripheral in the fake's world: what it advertises, its GATT database,
/// and whether it is in range.
public struct FakePeripheral: Sendable, Hashable {
    /// Its address (and address type).
    public var address: BluetoothAddress
    /// The Local Name it advertises, if any.
    public var advertisedName: String?
    /// Its GAP Device Name (real bluetoothd puts it into `Device1.Name` after a connection).
    public var gapName: String?
    /// Its primary services, in handle order.
    public var services: [FakeService]
    /// Whether a central can reach it (advertising, connectable).
    public var inRange: Bool
    /// Its RSSI while in range; ``rssiNotAvailable`` when its controller
    /// reports none.
    public var rssi: Int16
    /// What it advertises beyond its name and services (manufacturer and
    /// service data, TX power, ...); ``FakeBlueZ/setAdvertisingData(_:_:)`` changes it.
    public var advertisingData = AdvertisingData()
    /// The ATT MTU its links negotiate (bluetoothd's `MTU` on each characteristic).
    public var mtu = 247

    /// The RSSI an advertising report carries when the controller has none
    /// (HCI's 0x7f, as btvirt and some real controllers report): the
    /// kernel drops such reports while the discovery filter has an RSSI
    /// threshold (issue 20 finding 6).
    public static let rssiNotAvailable: Int16 = 127

    /// A peripheral.
    public init(address: BluetoothAddress, advertisedName: String? = nil, gapName: String? = nil,
                services: [FakeService] = [], inRange: Bool = true, rssi: Int16 = -60) {
        self.address = address
        self.advertisedName = advertisedName
        self.gapName = gapName
        self.services = services
        self.inRange = inRange
        self.rssi = rssi
    }

    /// The services it advertises (all of its primary services here).
    public var advertisedServices: [BluetoothUUID] { services.filter(\.primary).map(\.uuid) }
}

/// A service of a fake peripheral.
public struct FakeService: Sendable, Hashable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Its characteristics, in handle order.
    public var characteristics: [FakeCharacteristic]
    /// Primary (advertised) or secondary (only included).
    public var primary: Bool
    /// The UUIDs of the peripheral's services it includes.
    public var includes: [BluetoothUUID]

    /// A service.
    public init(uuid: BluetoothUUID, characteristics: [FakeCharacteristic], primary: Bool = true, includes: [BluetoothUUID] = []) {
        self.uuid = uuid
        self.characteristics = characteristics
        self.primary = primary
        self.includes = includes
    }
}

/// A characteristic of a fake peripheral.
public struct FakeCharacteristic: Sendable, Hashable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// BlueZ's flags (`read`, `write`, `notify`, ...).
    public var flags: [String]
    /// Its current value.
    public var value: [UInt8]
    /// Its descriptors, in handle order.
    public var descriptors: [FakeDescriptor]
    /// With `write-without-response`: whether bluetoothd offers
    /// `AcquireWrite` for it (real bluetoothd always does; false plays one
    /// that does not, so writes go through `WriteValue`).
    public var offersAcquireWrite = true
    /// With ``offersAcquireWrite``: shows `WriteAcquired` but has no
    /// `AcquireWrite` method (`UnknownMethod`), as BlueZoo does.
    public var acquireWriteMethodMissing = false

    /// A characteristic.
    public init(uuid: BluetoothUUID, flags: [String] = ["read", "notify"], value: [UInt8] = [], descriptors: [FakeDescriptor] = []) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.descriptors = descriptors
    }
}

/// A descriptor of a fake peripheral's characteristic.
public struct FakeDescriptor: Sendable, Hashable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// BlueZ's flags (`read`, `write`).
    public var flags: [String]
    /// Its current value.
    public var value: [UInt8]

    /// A descriptor.
    public init(uuid: BluetoothUUID, flags: [String] = ["read"], value: [UInt8] = []) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
    }
}
