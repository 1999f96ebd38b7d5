public import BlueZ
public import DBus
public import RelinkModel

// The fake's GATT database beyond services and characteristics: included
// services (`GattService1.Includes`), descriptors (`GattDescriptor1`, read
// and written as bluetoothd does), and a database that changes on a live
// link, as a peripheral's firmware update or GATT application restart does.
extension FakeBlueZ {
    /// The object paths of the services `service` includes (its peripheral's
    /// services with those UUIDs).
    func includedServicePaths(_ address: BluetoothAddress, _ service: FakeService) -> [ObjectPath] {
        guard let peripheral = world[address] else { return [] }
        return service.includes.compactMap { uuid in
            peripheral.services.firstIndex { $0.uuid == uuid }.map { servicePath(address, $0) }
        }
    }

    /// A descriptor's object path: under its characteristic, named by its handle.
    func descriptorPath(_ address: BluetoothAddress, _ service: Int, _ characteristic: Int, _ index: Int) -> ObjectPath {
        let c = characteristicPath(address, service, characteristic)
        let handle = Int(c.rawValue.suffix(4), radix: 16).map { $0 + 1 + index } ?? index
        return ObjectPath(fakeTrusted: c.rawValue + "/desc" + hex4(handle))
    }

    /// The descriptor objects of one characteristic.
    func descriptorObjects(_ address: BluetoothAddress, _ s: Int, _ c: Int, _ characteristic: FakeCharacteristic) -> [(ObjectPath, ObjectInterfaces)] {
        characteristic.descriptors.enumerated().map { d, descriptor in
            (descriptorPath(address, s, c, d), [BlueZInterface.gattDescriptor: [
                "UUID": .string(descriptor.uuid.string), "Characteristic": .objectPath(characteristicPath(address, s, c)),
                "Flags": .array(.string, descriptor.flags.map { .string($0) }),
                "Value": .array(.byte, descriptor.value.map { .byte($0) }),
            ]])
        }
    }

    /// The (address, service, characteristic, descriptor) indexes of a descriptor object on a link.
    private func descriptorIndex(_ path: ObjectPath) throws -> (BluetoothAddress, Int, Int, Int) {
        for (address, peripheral) in world {
            for (s, service) in peripheral.services.enumerated() {
                for (c, characteristic) in service.characteristics.enumerated() {
                    for d in characteristic.descriptors.indices where descriptorPath(address, s, c, d) == path {
                        guard mirror.objects[path]?[BlueZInterface.gattDescriptor] != nil else { break }
                        return (address, s, c, d)
                    }
                }
            }
        }
        throw BlueZError(name: DBusError.Name.unknownObject.rawValue, message: "no descriptor \(path)")
    }

    /// The descriptor's value, as bluetoothd reads it from the peripheral.
    public func readDescriptor(_ descriptor: ObjectPath, timeout: Duration) async throws -> [UInt8] {
        let (address, s, c, d) = try descriptorIndex(descriptor)
        guard connected.contains(address) else { throw BlueZError(name: "org.bluez.Error.Failed", message: "Not connected") }
        guard let value = world[address]?.services[s].characteristics[c].descriptors[d],
              value.flags.contains("read") else { throw BlueZError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted") }
        return value.value
    }

    /// Stores the value in the peripheral's descriptor.
    public func writeDescriptor(_ descriptor: ObjectPath, _ value: [UInt8], timeout: Duration) async throws {
        let (address, s, c, d) = try descriptorIndex(descriptor)
        guard connected.contains(address) else { throw BlueZError(name: "org.bluez.Error.Failed", message: "Not connected") }
        guard world[address]?.services[s].characteristics[c].descriptors[d].flags.contains("write") == true else {
            throw BlueZError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        }
        world[address]?.services[s].characteristics[c].descriptors[d].value = value
    }

    /// A descriptor's value in the peripheral (what a write left there).
    public func descriptorValue(_ address: BluetoothAddress, _ key: DescriptorKey) -> [UInt8]? {
        world[address]?.services.first { $0.uuid == key.characteristic.service }?
            .characteristics.first { $0.uuid == key.characteristic.characteristic }?
            .descriptors.first { $0.uuid == key.descriptor }?.value
    }

    /// The peripheral's database changes (a firmware update): on a live link
    /// its GATT objects are removed and the new ones added under new paths,
    /// as bluetoothd does after a Service Changed indication.
    public func replaceServices(_ address: BluetoothAddress, with services: [FakeService]) {
        world[address]?.services = services
        restartGattApplication(address)
    }
}
