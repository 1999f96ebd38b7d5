public import struct Foundation.Date
public import RelinkModel

/// Tells a device's advertising name from its GAP name, from what BlueZ
/// shows: `Device1.Name` changes, `Connected`, and the value of an exported
/// 0x2A00 characteristic.
///
/// The rule, from `src/device.c` and `profiles/gap/gas.c` (bluez-facts.md):
/// * a `Name` seen while the device is **not connected** is its advertising
///   name (only discovery writes `Name` then), unless it is the known GAP
///   name and not the known advertising name: that is BlueZ's GAP name of
///   a connection whose `Connected=true` was not signalled (bluetoothd
///   5.66, issue 20 findings 2 and 5), and the name keeps its source. (The cost:
///   a device that starts advertising its GAP name keeps its older
///   advertising name in relink.)
/// * a `Name` change while **connected** is the GAP name read by BlueZ's GAP
///   plugin, unless it came from an advertisement received while connected
///   (bluetoothd's background scan for auto-connect reports them; seen on
///   bluetoothd 5.66, where the name then flipped at every such report,
///   issue 20 finding 5). It is the advertising name when a GAP name was
///   already learnt on this connection (from the 0x2A00 characteristic or
///   from the first `Name` change after connecting) and it differs, or
///   when it is the known advertising name and not the known GAP name;
/// * a value of the 0x2A00 characteristic is always the GAP name.
/// The `Name` present when the device first appears is attributed by the
/// same rule, by its `Connected` state at that moment.
public struct NameTracker: Sendable, Hashable {
    public private(set) var names: DeviceNames
    private var connected = false
    /// The GAP name read from the characteristic during this connection.
    private var characteristicNameThisConnection: String?
    /// The GAP name inferred from a `Name` change during this connection.
    private var inferredNameThisConnection: String?

    public init(names: DeviceNames = DeviceNames()) {
        self.names = names
    }

    /// Names known of the device from before (relinkd's stored ones): each
    /// one this tracker has not learnt yet is taken, with when it was seen.
    public mutating func learn(_ known: DeviceNames) {
        names.fillGaps(from: known)
    }

    /// The device's `Connected` property changed (or was first seen).
    public mutating func connectedChanged(_ isConnected: Bool) {
        if connected != isConnected { characteristicNameThisConnection = nil; inferredNameThisConnection = nil }
        connected = isConnected
    }

    /// The device's `Name` property was seen with this value.
    /// - Returns: the change it makes to one of the names, if any.
    public mutating func nameSeen(_ name: String, at date: Date) -> NameChange? {
        guard connected else {
            if name == names.gapName, name != names.advertisingName {
                return setGAP(name, source: names.gapNameSource ?? .nameAfterConnect, at: date)
            }
            return setAdvertising(name, at: date)
        }
        if let gap = characteristicNameThisConnection ?? inferredNameThisConnection {
            return gap == name ? setGAP(name, source: names.gapNameSource ?? .nameAfterConnect, at: date) : setAdvertising(name, at: date)
        }
        if name == names.advertisingName, name != names.gapName { return setAdvertising(name, at: date) }
        inferredNameThisConnection = name
        return setGAP(name, source: .nameAfterConnect, at: date)
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
