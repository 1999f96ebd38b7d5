public import DBus
public import RelinkModel
public import struct Foundation.Date

// A device's GATT database as one model value, and the descriptor lookup
// of descriptor reads and writes.
extension Mirror {
    /// The device's GATT objects as a ``RelinkModel/GattDatabase``: services,
    /// characteristics and descriptors in handle order (bluetoothd names
    /// each object by its handle, `service001a/char001b/desc001d`, so path
    /// order is handle order), inclusions by UUID. Objects whose UUID does
    /// not parse are left out. One pass over the device's objects.
    public func gattDatabase(of device: ObjectPath, readAt: Date = Date()) -> GattDatabase {
        var services: [GattService] = []
        var characteristics: [ObjectPath: [GattCharacteristic]] = [:]
        var descriptors: [ObjectPath: [GattDescriptor]] = [:]
        let prefix = device.rawValue + "/"
        for (path, interfaces) in objects where path.rawValue.hasPrefix(prefix) {
            if let props = interfaces[BlueZInterface.gattService] {
                services.append(GattService(path: path, properties: props))
            } else if let props = interfaces[BlueZInterface.gattCharacteristic] {
                let c = GattCharacteristic(path: path, properties: props)
                if let service = c.service { characteristics[service, default: []].append(c) }
            } else if let props = interfaces[BlueZInterface.gattDescriptor] {
                let d = GattDescriptor(path: path, properties: props)
                if let characteristic = d.characteristic { descriptors[characteristic, default: []].append(d) }
            }
        }
        services.sort { $0.path < $1.path }
        var uuidOfService: [ObjectPath: BluetoothUUID] = [:]
        for service in services { uuidOfService[service.path] = try? BluetoothUUID(parsing: service.uuid) }
        let database: [GattDatabase.Service] = services.compactMap { service in
            guard let uuid = uuidOfService[service.path] else { return nil }
            let chars: [GattDatabase.Characteristic] = (characteristics[service.path] ?? []).sorted { $0.path < $1.path }.compactMap { c in
                guard let cu = try? BluetoothUUID(parsing: c.uuid) else { return nil }
                let descs: [GattDatabase.Descriptor] = (descriptors[c.path] ?? []).sorted { $0.path < $1.path }.compactMap { d in
                    guard let du = try? BluetoothUUID(parsing: d.uuid) else { return nil }
                    return GattDatabase.Descriptor(uuid: du, flags: d.flags)
                }
                return GattDatabase.Characteristic(uuid: cu, flags: c.flags, descriptors: descs)
            }
            return GattDatabase.Service(uuid: uuid, isPrimary: service.primary,
                                        includedServices: service.includes.compactMap { uuidOfService[$0] }, characteristics: chars)
        }
        return GattDatabase(services: database, readAt: readAt)
    }

    /// The descriptors of a characteristic object, in handle order.
    public func descriptors(of characteristic: ObjectPath) -> [GattDescriptor] {
        let prefix = characteristic.rawValue + "/"
        return objects.compactMap { path, i in
            guard path.rawValue.hasPrefix(prefix), let props = i[BlueZInterface.gattDescriptor] else { return nil }
            let d = GattDescriptor(path: path, properties: props)
            return d.characteristic == characteristic ? d : nil
        }
        .sorted { $0.path < $1.path }
    }
}
