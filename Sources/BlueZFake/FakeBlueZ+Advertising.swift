public import BlueZ
public import DBus
public import RelinkModel

// Advertising data (issue 22 item 3): what a peripheral advertises beyond
// its name and services reaches `Device1` as bluetoothd shows it, on every
// report while discovery has `DuplicateData` (relinkd's filter always has).
extension FakeBlueZ {
    /// Changes what a peripheral advertises; the next report (at once, when
    /// it is in range and discovery runs) carries it.
    public func setAdvertisingData(_ address: BluetoothAddress, _ data: AdvertisingData) {
        world[address]?.advertisingData = data
        advertise(address)
    }

    /// The peripheral advertises once more, unchanged (one more report).
    public func advertiseAgain(_ address: BluetoothAddress) {
        advertise(address)
    }

    /// `Device1`'s advertising properties for `data`, typed as bluetoothd
    /// types them (doc/org.bluez.Device.rst); a property whose value is
    /// unknown or empty is left out, as bluetoothd leaves it out.
    public static func advertisingProperties(_ data: AdvertisingData) -> InterfaceProperties {
        var props: InterfaceProperties = [:]
        if !data.manufacturerData.isEmpty { props["ManufacturerData"] = data.dbusManufacturerData }
        if !data.serviceData.isEmpty { props["ServiceData"] = data.dbusServiceData }
        if !data.raw.isEmpty {
            props["AdvertisingData"] = .dictionary(key: .byte, value: .variant, data.raw.sorted { $0.key < $1.key }.map {
                .init(.byte($0.key), AdvertisingData.dbusBytes($0.value))
            })
        }
        if let tx = data.txPower { props["TxPower"] = .int16(tx) }
        if let appearance = data.appearance { props["Appearance"] = .uint16(appearance) }
        if let flags = data.flags { props["AdvertisingFlags"] = .array(.byte, flags.map { .byte($0) }) }
        return props
    }
}
