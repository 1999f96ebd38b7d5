public import DBus
public import RelinkModel

/// A change in bluetoothd's object tree, as the mirror saw it, in the order
/// the bus delivered it.
public enum MirrorEvent: Sendable, Hashable {
    case adapterAdded(Adapter)
    case adapterRemoved(ObjectPath)
    /// An adapter object gained `GattManager1` or `LEAdvertisingManager1`
    /// (`interface`): bluetoothd 5.82 adds them after the adapter itself,
    /// so a registration in between was answered `UnknownMethod`.
    case adapterManagerAdded(adapter: ObjectPath, interface: String)
    case deviceAdded(Device)
    case deviceRemoved(ObjectPath, address: String?)
    case gattServiceAdded(GattService)
    case gattCharacteristicAdded(GattCharacteristic)
    /// A descriptor object appeared (its characteristic's database changed, or was discovered).
    case gattDescriptorAdded(GattDescriptor)
    case gattObjectRemoved(ObjectPath)
    /// A property of an adapter, device or GATT object changed (or was
    /// invalidated: `new` is nil).
    case propertyChanged(path: ObjectPath, interface: String, property: String, old: DBusValue?, new: DBusValue?)
    /// A characteristic's `Value` changed: a notification or a read.
    /// BlueZ emits this for every notification, even with an unchanged value.
    case valueUpdated(ValueUpdate)
    /// One of a device's names changed.
    case nameChanged(device: ObjectPath, NameChange)
    /// A signal changed a device's advertising properties
    /// (``Device/advertisingProperties``): one advertising report, however
    /// many of them it changed; after their `propertyChanged` events.
    case advertisementReported(device: ObjectPath)
    /// bluetoothd said why a device's link ended (`Device1.Disconnected`,
    /// BlueZ 5.83 and later): just before that link's `Connected=false`.
    case linkEnded(device: ObjectPath, LinkEndCause)
}

/// A characteristic's new value with what a receiver needs to route it,
/// taken from the mirror when the signal was applied: the receiver does not
/// have to ask the mirror again (a notification is relinkd's hot path).
public struct ValueUpdate: Sendable, Hashable {
    public var characteristic: ObjectPath
    public var value: [UInt8]
    /// The characteristic's UUID (lower case).
    public var characteristicUUID: String
    /// The UUID (lower case) of the service the characteristic is in; nil
    /// when the service object is not known.
    public var serviceUUID: String?
    /// The device the characteristic belongs to, nil when not known.
    public var device: ObjectPath?
    /// That device's adapter, address, address type and link state when
    /// the value arrived.
    public var adapter: ObjectPath?
    public var address: String?
    public var addressType: String?
    public var connected: Bool

    public init(
        characteristic: ObjectPath, value: [UInt8], characteristicUUID: String, serviceUUID: String? = nil,
        device: ObjectPath? = nil, adapter: ObjectPath? = nil, address: String? = nil, addressType: String? = nil, connected: Bool = false
    ) {
        self.characteristic = characteristic
        self.value = value
        self.characteristicUUID = characteristicUUID
        self.serviceUUID = serviceUUID
        self.device = device
        self.adapter = adapter
        self.address = address
        self.addressType = addressType
        self.connected = connected
    }
}
