public import RelinkModel
public import Restoration

// What a change of one of bluetoothd's device properties means, for each
// subsystem that cares: the peripheral's identity, its API object, its bond,
// the program's write streams and transfers, and its connection machines.
extension DaemonCore {
    /// The device properties relinkd acts on (BlueZ's `Device1` names, told
    /// apart by the daemon).
    public enum DeviceProperty: Sendable, Hashable {
        /// `Address` (with `AddressType`): a private address resolved to the identity.
        case address
        /// `Connected`.
        case connected
        /// `ServicesResolved`.
        case servicesResolved
        /// `RSSI`: the device is in range.
        case rssi
        /// `Paired`.
        case paired
        /// `Bonded`.
        case bonded
        /// `Trusted`.
        case trusted
    }

    /// One property change of a device on relinkd's adapter.
    public struct DeviceChange: Sendable, Hashable {
        /// The known peripheral at the device's address; nil for a device relinkd does not know.
        public var peripheral: PeripheralID?
        /// The device's address.
        public var address: BluetoothAddress
        /// The property that changed.
        public var property: DeviceProperty
        /// Its new value, for a boolean property.
        public var newValue: Bool?
        /// Whether the device is connected now.
        public var connected: Bool
        /// Whether bluetoothd has the device paired or bonded now (its `Paired` or `Bonded`).
        public var bonded: Bool
        /// bluetoothd's reason for the link's end, when it gave one just before (BlueZ 5.83+).
        public var linkEndCause: LinkEndCause?

        /// A change of `property` on the device at `address`.
        public init(peripheral: PeripheralID?, address: BluetoothAddress, property: DeviceProperty, newValue: Bool?,
                    connected: Bool, bonded: Bool = false, linkEndCause: LinkEndCause? = nil) {
            self.peripheral = peripheral
            self.address = address
            self.property = property
            self.newValue = newValue
            self.connected = connected
            self.bonded = bonded
            self.linkEndCause = linkEndCause
        }
    }

    /// What a device's property change means, in the order it is carried out.
    mutating func deviceChanged(_ change: DeviceChange) -> [Effect] {
        let property = change.property
        var effects: [Effect] = []
        if property == .address { effects.append(.followAddressChange) }
        if let peripheral = change.peripheral {
            if [.connected, .rssi].contains(property) { effects.append(.peripheralSeen(peripheral)) }
            if [.paired, .bonded, .trusted].contains(property) { effects.append(.peripheralChanged(peripheral)) }
            if [.paired, .bonded, .connected].contains(property) {
                // The signal's own `true` counts even where the device's
                // state has moved on since (bluetoothd removed it already):
                // a bond is seen in bus order, so its removal is told.
                let signalled = [.paired, .bonded].contains(property) && change.newValue == true
                effects += bondObserved(peripheral, bonded: signalled || change.bonded)
            }
            if property == .paired, change.newValue == true { effects.append(.pairedByBluetoothd(peripheral)) }
            if [.connected, .servicesResolved].contains(property) {
                effects += [.writeStreamsLinkChanged(peripheral), .transfersLinkChanged(peripheral)]
            }
        }
        switch (property, change.newValue) {
        case (.connected, true?):
            if let peripheral = change.peripheral { effects.append(.feedEach(intents(of: peripheral), .deviceConnected(change.address))) }
        case (.connected, false?):
            effects.append(.linkEndCauseUsed)
            effects += linkLost(change.peripheral, change.address, why: "the link went down", cause: change.linkEndCause)
        case (.servicesResolved, false?) where change.connected:
            // Usually `Connected=false` follows at once (a disconnect). Real
            // bluetoothd can instead merge a drop and an immediate reconnect
            // to a dying controller into one PropertiesChanged
            // (ServicesResolved=false, Connected=true): a half-open link that
            // carries nothing. Checked after a grace period.
            effects.append(.checkHalfOpenLater(change.address))
        case (.servicesResolved, true?):
            if let peripheral = change.peripheral { effects.append(.feedEach(intents(of: peripheral), .servicesResolved(change.address))) }
            effects.append(.gattObjectsMoved)
        default:
            break
        }
        return effects
    }
}
