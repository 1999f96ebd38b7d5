import RelinkModel
import DBus

extension Device {
    /// The `Device1` properties an advertising report sets: a signal that
    /// changes any of them is one report (``MirrorEvent/advertisementReported(device:)``).
    public static let advertisingProperties: Set<String> = [
        "RSSI", "ManufacturerData", "ServiceData", "TxPower", "Appearance", "AdvertisingFlags", "AdvertisingData",
    ]
}

extension Dictionary where Key == String, Value == DBusValue {
    /// The advertising data of a `Device1`'s properties (doc/org.bluez.Device.rst):
    /// `ManufacturerData` `a{qv}`, `ServiceData` `a{sv}` (a key that is not a
    /// UUID is skipped), `TxPower` `n`, `Appearance` `q`, `AdvertisingFlags`
    /// `ay`, `AdvertisingData` `a{yv}`; each variant holds `ay`. A missing or
    /// mistyped property reads as absent.
    func advertisingData() -> AdvertisingData {
        var data = AdvertisingData()
        for (key, value) in entries("ManufacturerData") {
            if case .uint16(let company) = key, let bytes = value.byteArray { data.manufacturerData[company] = bytes }
        }
        for (key, value) in entries("ServiceData") {
            if case .string(let text) = key, let uuid = try? BluetoothUUID(parsing: text), let bytes = value.byteArray {
                data.serviceData[uuid] = bytes
            }
        }
        for (key, value) in entries("AdvertisingData") {
            if case .byte(let type) = key, let bytes = value.byteArray { data.raw[type] = bytes }
        }
        data.txPower = int16("TxPower")
        if case .uint16(let appearance)? = self["Appearance"]?.unwrapped { data.appearance = appearance }
        data.flags = bytes("AdvertisingFlags").flatMap { $0.isEmpty ? nil : $0 }
        return data
    }

    private func entries(_ key: String) -> [(DBusValue, DBusValue)] {
        guard case .dictionary(_, _, let items)? = self[key]?.unwrapped else { return [] }
        return items.map { ($0.key, $0.value) }
    }
}

extension DBusValue {
    /// The bytes of an `ay` (inside any variants), else nil.
    var byteArray: [UInt8]? {
        guard case .array(.byte, let items) = unwrapped else { return nil }
        return items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    }
}
