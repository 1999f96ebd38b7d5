import DBus

/// A change in bluetoothd's object tree, as the mirror saw it, in the order
/// the bus delivered it.
public enum MirrorEvent: Sendable, Hashable {
    case adapterAdded(Adapter)
    case adapterRemoved(ObjectPath)
    case deviceAdded(Device)
    case deviceRemoved(ObjectPath, address: String?)
    case gattServiceAdded(GattService)
    case gattCharacteristicAdded(GattCharacteristic)
    case gattObjectRemoved(ObjectPath)
    /// A property of an adapter, device or GATT object changed (or was
    /// invalidated: `new` is nil).
    case propertyChanged(path: ObjectPath, interface: String, property: String, old: DBusValue?, new: DBusValue?)
    /// A characteristic's `Value` changed: a notification or a read.
    /// BlueZ emits this for every notification, even with an unchanged value.
    case valueUpdated(characteristic: ObjectPath, device: ObjectPath?, value: [UInt8])
    /// One of a device's names changed.
    case nameChanged(device: ObjectPath, NameChange)
}
