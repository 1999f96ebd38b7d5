public import DBus
public import RelinkModel

/// A snapshot of an `org.bluez.Device1` object, with the layer's own
/// tracking of its two names.
public struct Device: Sendable, Hashable {
    public var path: ObjectPath
    public var adapter: ObjectPath?
    /// The address as BlueZ shows it, upper case, e.g. `00:00:00:00:00:02`.
    public var address: String?
    /// `public` or `random`.
    public var addressType: String?
    /// BlueZ's single `Name` slot (last writer wins; see ``names``).
    public var name: String?
    public var alias: String?
    public var connected: Bool
    public var servicesResolved: Bool
    public var paired: Bool
    /// `Bonded`: the pairing's keys are stored (absent on bluetoothd before 5.65: false).
    public var bonded: Bool
    public var trusted: Bool
    public var rssi: Int16?
    public var uuids: [String]
    /// ``uuids`` parsed, those that are not UUIDs left out: the services
    /// bluetoothd lists for the device.
    public var serviceUUIDs: Set<BluetoothUUID> { Set(uuids.compactMap { try? BluetoothUUID(parsing: $0) }) }
    /// Manufacturer and service data, TX power, appearance, flags and the
    /// raw advertising data, as bluetoothd merged them from its reports.
    public var advertisingData: AdvertisingData
    /// The advertising name and the GAP name, told apart by ``NameTracker``.
    public var names: DeviceNames

    /// The address bluetoothd names a device object after, as the path
    /// spells it (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` → `AA:BB:CC:DD:EE:FF`);
    /// nil for a path that is not a device's. For a device no longer in
    /// the mirror, or one named only by its path.
    public static func address(inPath path: ObjectPath) -> String? {
        guard let last = path.rawValue.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        return last.dropFirst(4).split(separator: "_").joined(separator: ":")
    }

    /// The path bluetoothd names the device at `address` on `adapter`
    /// after (`AA:BB:CC:DD:EE:FF` → `<adapter>/dev_AA_BB_CC_DD_EE_FF`), the
    /// inverse of ``address(inPath:)``; nil only for an adapter path that
    /// is not one.
    public static func path(of address: BluetoothAddress, on adapter: ObjectPath) -> ObjectPath? {
        try? ObjectPath(adapter.rawValue + "/dev_" + address.string.replacingOccurrences(of: ":", with: "_"))
    }

    init(path: ObjectPath, properties p: InterfaceProperties, names: DeviceNames) {
        self.path = path
        adapter = p.path("Adapter")
        address = p.string("Address")
        addressType = p.string("AddressType")
        name = p.string("Name")
        alias = p.string("Alias")
        connected = p.bool("Connected") ?? false
        servicesResolved = p.bool("ServicesResolved") ?? false
        paired = p.bool("Paired") ?? false
        bonded = p.bool("Bonded") ?? false
        trusted = p.bool("Trusted") ?? false
        rssi = p.int16("RSSI")
        uuids = p.strings("UUIDs").map { $0.lowercased() }
        advertisingData = p.advertisingData()
        self.names = names
    }

    /// Whether the device offers (advertises or has resolved) a service.
    public func offers(service uuid: String) -> Bool {
        uuids.contains(uuid.lowercased())
    }
}
