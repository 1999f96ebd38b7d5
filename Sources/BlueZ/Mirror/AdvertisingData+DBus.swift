public import DBus
public import RelinkModel

extension AdvertisingData {
    /// `ManufacturerData` as BlueZ types it on `Device1` and
    /// `LEAdvertisement1` (`a{qv}`, each variant `ay`), companies in order.
    public var dbusManufacturerData: DBusValue {
        .dictionary(key: .uint16, value: .variant, manufacturerData.sorted { $0.key < $1.key }.map {
            .init(.uint16($0.key), Self.dbusBytes($0.value))
        })
    }

    /// `ServiceData` as BlueZ types it on `Device1` and `LEAdvertisement1`
    /// (`a{sv}`, UUID strings to variants of `ay`), UUIDs in order.
    public var dbusServiceData: DBusValue {
        .dictionary(key: .string, value: .variant, serviceData.sorted { $0.key < $1.key }.map {
            .init(.string($0.key.string), Self.dbusBytes($0.value))
        })
    }

    /// A variant holding `ay`, the value type of BlueZ's advertising dictionaries.
    public static func dbusBytes(_ bytes: [UInt8]) -> DBusValue { .variant(.array(.byte, bytes.map { .byte($0) })) }
}
