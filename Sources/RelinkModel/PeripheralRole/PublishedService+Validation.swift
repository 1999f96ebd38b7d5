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
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)``: a service UUID twice or
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
                throw .invalidPeripheralRole("service \(service.uuid) is bluetoothd's own (GAP 0x1800, GATT 0x1801): its Device Name is the adapter's Alias")
            }
            guard seen.insert(service.uuid).inserted else { throw .invalidPeripheralRole("service \(service.uuid) is published twice") }
        }
        for service in services {
            for included in service.includedServices {
                guard included != service.uuid else { throw .invalidPeripheralRole("service \(service.uuid) includes itself") }
                guard seen.contains(included) else {
                    throw .invalidPeripheralRole("service \(service.uuid) includes \(included), which is not published")
                }
            }
            var characteristics = Set<BluetoothUUID>()
            for characteristic in service.characteristics {
                guard characteristics.insert(characteristic.uuid).inserted else {
                    throw .invalidPeripheralRole("service \(service.uuid) has characteristic \(characteristic.uuid) twice")
                }
                try characteristic.validate(in: service.uuid)
            }
        }
    }
}

extension PublishedCharacteristic {
    func validate(in service: BluetoothUUID) throws(DomainError) {
        let name = "characteristic \(uuid) of service \(service)"
        guard !properties.isEmpty else { throw .invalidPeripheralRole("\(name) has no properties") }
        for refused: CharacteristicProperties in [.broadcast, .extendedProperties] where properties.contains(refused) {
            throw .invalidPeripheralRole("\(name): a published characteristic may not have \(refused.names.joined())")
        }
        if properties.contains(.read) && !permissions.contains(.readable) && permissions.isDisjoint(with: AttributePermissions.readLevels) {
            throw .invalidPeripheralRole("\(name) has the read property and no read permission (readable or a read security level)")
        }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites])
            && !permissions.contains(.writeable) && permissions.isDisjoint(with: AttributePermissions.writeLevels) {
            throw .invalidPeripheralRole("\(name) has a write property and no write permission (writeable or a write security level)")
        }
        try validateSecurity(name)
        if let value {
            guard value.count <= maximumAttributeValueBytes else {
                throw .invalidPeripheralRole("\(name): its value has \(value.count) bytes, more than \(maximumAttributeValueBytes)")
            }
            guard properties.isSubset(of: [.read]) else {
                throw .invalidPeripheralRole("\(name) has a static value, so it may only be read (CoreBluetooth's rule): drop the value or the other properties")
            }
            guard !cacheable else { throw .invalidPeripheralRole("\(name) has a static value and is cacheable: a static value is always answered") }
        }
        var descriptorUUIDs = Set<BluetoothUUID>()
        for descriptor in descriptors {
            guard descriptor.uuid != GattDatabase.clientCharacteristicConfiguration else {
                throw .invalidPeripheralRole("\(name): the CCCD (0x2902) is bluetoothd's, added for notify and indicate")
            }
            guard descriptorUUIDs.insert(descriptor.uuid).inserted else { throw .invalidPeripheralRole("\(name) has descriptor \(descriptor.uuid) twice") }
            try descriptor.validatePermissions("\(name): descriptor \(descriptor.uuid)")
            guard descriptor.value.count <= maximumAttributeValueBytes else {
                throw .invalidPeripheralRole("\(name): descriptor \(descriptor.uuid) has \(descriptor.value.count) bytes, more than \(maximumAttributeValueBytes)")
            }
        }
    }
}

extension PublishedCharacteristic {
    /// At most one security level per access (BlueZ would take the union,
    /// so two would be a contradiction the program did not mean), and a
    /// notification level only on a characteristic that notifies or
    /// indicates.
    func validateSecurity(_ name: String) throws(DomainError) {
        for (levels, access) in [(AttributePermissions.readLevels, "reads"), (AttributePermissions.writeLevels, "writes")]
        where permissions.intersection(levels).names.count > 1 {
            throw .invalidPeripheralRole("\(name) asks for two security levels for \(access) (\(permissions.intersection(levels).names.joined(separator: ", "))): keep one")
        }
        let notifyLevels = permissions.intersection(AttributePermissions.notifyLevels).names
            + (properties.isDisjoint(with: [.notifyEncryptionRequired, .indicateEncryptionRequired]) ? [] : ["notifyEncryptionRequired or indicateEncryptionRequired"])
        if notifyLevels.count > 1 {
            throw .invalidPeripheralRole("\(name) asks for two security levels for notifications (\(notifyLevels.joined(separator: ", "))): keep one")
        }
        if !permissions.isDisjoint(with: AttributePermissions.notifyLevels) && properties.isDisjoint(with: .notifying) {
            throw .invalidPeripheralRole("\(name) asks for a notification security level but neither notifies nor indicates")
        }
    }
}

extension PublishedDescriptor {
    /// A published descriptor is read-only (a static value): `readable`
    /// and at most one read security level.
    func validatePermissions(_ name: String) throws(DomainError) {
        let allowed = AttributePermissions.readLevels.union(.readable)
        guard permissions.isSubset(of: allowed) else {
            throw .invalidPeripheralRole("\(name) is read-only: its permissions may be readable and one read security level, not \(permissions.subtracting(allowed).names.joined(separator: ", "))")
        }
        guard !permissions.isEmpty else { throw .invalidPeripheralRole("\(name) has no read permission") }
        guard permissions.intersection(AttributePermissions.readLevels).names.count <= 1 else {
            throw .invalidPeripheralRole("\(name) asks for two security levels for reads: keep one")
        }
    }
}
