public import struct Foundation.Date
public import RelinkModel

/// Tells a device's advertising name from its GAP name, from what BlueZ
/// shows: `Device1.Name` changes, `Connected`, and the value of an exported
/// 0x2A00 characteristic.
///
/// The rule, from `src/device.c` and `profiles/gap/gas.c` (bluez-facts.md):
/// * a `Name` seen while the device is **not connected** is its advertising
///   name (only discovery writes `Name` then);
/// * a `Name` change while **connected** is the GAP name read by BlueZ's GAP
///   plugin, unless a GAP name was read from the exported 0x2A00
///   characteristic on this connection and differs from it: then the
///   change came from an advertisement received while connected, and is the
///   advertising name;
/// * a value of the 0x2A00 characteristic is always the GAP name.
/// The `Name` present when the device first appears is attributed by the
/// same rule, by its `Connected` state at that moment.
public struct NameTracker: Sendable, Hashable {
    public private(set) var names: DeviceNames
    private var connected = false
    /// The GAP name read from the characteristic during this connection.
    private var characteristicNameThisConnection: String?

    public init(names: DeviceNames = DeviceNames()) {
        self.names = names
    }

    /// The device's `Connected` property changed (or was first seen).
    public mutating func connectedChanged(_ isConnected: Bool) {
        if connected != isConnected { characteristicNameThisConnection = nil }
        connected = isConnected
    }

    /// The device's `Name` property was seen with this value.
    /// - Returns: the change it makes to one of the names, if any.
    public mutating func nameSeen(_ name: String, at date: Date) -> NameChange? {
        if connected, characteristicNameThisConnection == nil || characteristicNameThisConnection == name {
            return setGAP(name, source: characteristicNameThisConnection == nil ? .nameAfterConnect : .characteristic, at: date)
        }
        return setAdvertising(name, at: date)
    }

    /// The GAP Device Name characteristic (0x2A00) was read or notified.
    /// Invalid UTF-8 is replaced, never dropped. An empty value is BlueZ's
    /// "not read yet" cache and tells nothing.
    public mutating func gapCharacteristicRead(_ value: [UInt8], at date: Date) -> NameChange? {
        guard !value.isEmpty else { return nil }
        let name = String(decoding: value, as: UTF8.self)
        if connected { characteristicNameThisConnection = name }
        return setGAP(name, source: .characteristic, at: date)
    }

    private mutating func setAdvertising(_ name: String, at date: Date) -> NameChange? {
        let old = names.advertisingName
        names.advertisingName = name
        names.advertisingNameSeen = date
        return old == name ? nil : NameChange(source: .advertising, previous: old, current: name)
    }

    private mutating func setGAP(_ name: String, source: DeviceNames.GAPNameSource, at date: Date) -> NameChange? {
        let old = names.gapName
        names.gapName = name
        names.gapNameSeen = date
        names.gapNameSource = source
        return old == name ? nil : NameChange(source: .gap, previous: old, current: name)
    }
}
