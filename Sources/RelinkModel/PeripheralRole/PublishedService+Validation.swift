/// The largest attribute value the ATT protocol allows (Core spec Vol 3
/// Part F 3.2.9): static values, answers and updates above it are refused.
public let maximumAttributeValueBytes = 512
/// The most values one `PeripheralManager1.UpdateValues` call carries (the
/// update window's capacity: relinkd never takes more at once).
public let maximumUpdateBatch = 16

extension PublishedService {
    /// Services a GATT application may not export: bluetoothd serves GAP
    /// (0x1800) and GATT (0x1801) itself and refuses an application that
    /// has them (docs/real-bluez.md, finding 1).
    public static let reservedServices: Set<BluetoothUUID> = [BluetoothUUID(shortValue: 0x1800), BluetoothUUID(shortValue: 0x1801)]

    /// Checks a set of services to publish together (those already
    /// published and the new ones), naming the first problem.
    /// - Throws: ``DomainError/invalidOptions(_:)``: a service UUID twice or
    ///   reserved, a characteristic or descriptor UUID twice in its parent,
    ///   an included service that is not in the set (or itself), no
    ///   properties, properties a published characteristic may not have
    ///   (`broadcast`, `extendedProperties`) or that contradict its
    ///   permissions or its static value, a static value with `cacheable`,
    ///   the CCCD (0x2902) as a descriptor (bluetoothd adds it), a value
    ///   over ``maximumAttributeValueBytes``.
    public static func validate(_ services: [PublishedService]) throws(DomainError) {
        var seen = Set<BluetoothUUID>()
        for service in services {
            guard !reservedServices.contains(service.uuid) else {
                throw .invalidOptions("service \(service.uuid) is bluetoothd's own (GAP 0x1800, GATT 0x1801): its Device Name is the adapter's Alias")
            }
            guard seen.insert(service.uuid).inserted else { throw .invalidOptions("service \(service.uuid) is published twice") }
        }
        for service in services {
            for included in service.includedServices {
                guard included != service.uuid else { throw .invalidOptions("service \(service.uuid) includes itself") }
                guard seen.contains(included) else {
                    throw .invalidOptions("service \(service.uuid) includes \(included), which is not published")
                }
            }
            var characteristics = Set<BluetoothUUID>()
            for characteristic in service.characteristics {
                guard characteristics.insert(characteristic.uuid).inserted else {
                    throw .invalidOptions("service \(service.uuid) has characteristic \(characteristic.uuid) twice")
                }
                try characteristic.validate(in: service.uuid)
            }
        }
    }
}

extension PublishedCharacteristic {
    func validate(in service: BluetoothUUID) throws(DomainError) {
        let name = "characteristic \(uuid) of service \(service)"
        guard !properties.isEmpty else { throw .invalidOptions("\(name) has no properties") }
        for refused: CharacteristicProperties in [.broadcast, .extendedProperties] where properties.contains(refused) {
            throw .invalidOptions("\(name): a published characteristic may not have \(refused.names.joined())")
        }
        if properties.contains(.read) && !permissions.contains(.readable) && !permissions.contains(.readEncryptionRequired) {
            throw .invalidOptions("\(name) has the read property and no read permission (readable or readEncryptionRequired)")
        }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites])
            && !permissions.contains(.writeable) && !permissions.contains(.writeEncryptionRequired) {
            throw .invalidOptions("\(name) has a write property and no write permission (writeable or writeEncryptionRequired)")
        }
        if let value {
            guard value.count <= maximumAttributeValueBytes else {
                throw .invalidOptions("\(name): its value has \(value.count) bytes, more than \(maximumAttributeValueBytes)")
            }
            guard properties.isSubset(of: [.read]) else {
                throw .invalidOptions("\(name) has a static value, so it may only be read (CoreBluetooth's rule): drop the value or the other properties")
            }
            guard !cacheable else { throw .invalidOptions("\(name) has a static value and is cacheable: a static value is always answered") }
        }
        var descriptorUUIDs = Set<BluetoothUUID>()
        for descriptor in descriptors {
            guard descriptor.uuid != GattDatabase.clientCharacteristicConfiguration else {
                throw .invalidOptions("\(name): the CCCD (0x2902) is bluetoothd's, added for notify and indicate")
            }
            guard descriptorUUIDs.insert(descriptor.uuid).inserted else { throw .invalidOptions("\(name) has descriptor \(descriptor.uuid) twice") }
            guard descriptor.value.count <= maximumAttributeValueBytes else {
                throw .invalidOptions("\(name): descriptor \(descriptor.uuid) has \(descriptor.value.count) bytes, more than \(maximumAttributeValueBytes)")
            }
        }
    }
}
