/// What a peripheral advertises beyond its Local Name and service UUIDs, as
/// BlueZ shows it on `org.bluez.Device1` (doc/org.bluez.Device.rst):
/// `ManufacturerData` (`a{qv}`, company ID to bytes), `ServiceData`
/// (`a{sv}`, UUID to bytes), `TxPower` (`n`), `Appearance` (`q`),
/// `AdvertisingFlags` (`ay`) and `AdvertisingData` (`a{yv}`, AD type to
/// bytes: only the types bluetoothd deems safe for programs, never the name).
///
/// The one value type for advertising data: the BlueZ layer fills it, the
/// core matches scan filters and match rules on it, the event wire format
/// (`discovered`) carries it, and the client library hands it to programs.
/// BlueZ merges what it saw per key since it found the device (a company's
/// data replaces that company's earlier data); so does this value.
public struct AdvertisingData: Sendable, Hashable, Codable {
    /// Manufacturer-specific data (AD type 0xFF) by company identifier,
    /// every company the peripheral advertised; the bytes follow the
    /// company ID (which BlueZ strips).
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data (AD types 0x16, 0x20, 0x21) by service UUID; the bytes
    /// follow the UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// The advertised TX power level (dBm), when the advertisement had one.
    public var txPower: Int16?
    /// The advertised appearance (GAP Appearance value), when it had one.
    public var appearance: UInt16?
    /// The Flags AD type's bytes (bit 0x01 LE Limited, 0x02 LE General
    /// Discoverable, 0x04 BR/EDR not supported, ...), when it had them.
    public var flags: [UInt8]?
    /// The advertising data by AD type, as bluetoothd exposes it
    /// (`AdvertisingData`: only the types it deems safe for programs).
    public var raw: [UInt8: [UInt8]]

    /// Advertising data; every field empty unless given.
    public init(manufacturerData: [UInt16: [UInt8]] = [:], serviceData: [BluetoothUUID: [UInt8]] = [:],
                txPower: Int16? = nil, appearance: UInt16? = nil, flags: [UInt8]? = nil, raw: [UInt8: [UInt8]] = [:]) {
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.appearance = appearance
        self.flags = flags
        self.raw = raw
    }

    /// True when nothing is known.
    public var isEmpty: Bool {
        manufacturerData.isEmpty && serviceData.isEmpty && txPower == nil && appearance == nil && flags == nil && raw.isEmpty
    }
}
