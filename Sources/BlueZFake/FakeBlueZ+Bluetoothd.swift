import BlueZ
import DBus
import struct Foundation.Date
import RelinkModel

// How the fake plays bluetoothd: the signals each change of the world or
// each operation causes, applied to the mirror and handed to the sink.
extension FakeBlueZ {
    var knownDevices: Set<BluetoothAddress> {
        Set(world.keys.filter { mirror.device(devicePath($0)) != nil })
    }

    /// The adapter's properties as a starting bluetoothd exports them:
    /// powered unless rfkill blocks it.
    func adapterProperties() -> InterfaceProperties {
        [
            "Address": .string(adapterAddress), "Powered": .boolean(!adapterBlocked), "Discovering": .boolean(false),
            "Name": .string("fake"), "Alias": .string("fake"), "PowerState": .string(adapterBlocked ? "off-blocked" : "on"),
            "Roles": .array(.string, adapterRoles.map { .string($0) }),
        ]
    }

    func rebuild(reason: ResetReason) {
        var objects: ManagedObjects = [:]
        guard adapterPresent else {
            mirror = Mirror(managedObjects: objects, knownNames: mirror.knownNames)
            emit(.reset(reason))
            return
        }
        objects[adapterPath] = [BlueZInterface.adapter: adapterProperties()]
        for address in preKnown.union(connected).sorted() where world[address] != nil {
            var props = deviceProperties(address)
            if keptLinks.contains(address) {
                // A link the kernel kept across a bluetoothd crash: connected,
                // its services not resolved by the new bluetoothd.
                props["Connected"] = .boolean(true)
            } else if connected.contains(address) {
                props["Connected"] = .boolean(true)
                props["ServicesResolved"] = .boolean(true)
                objects.merge(gattObjects(address)) { _, new in new }
            }
            objects[devicePath(address)] = [BlueZInterface.device: props]
        }
        mirror = Mirror(managedObjects: objects, knownNames: mirror.knownNames)
        emit(.reset(reason))
    }

    func requireBluetoothd() throws {
        guard bluetoothdUp else { throw BlueZError(name: DBusError.Name.serviceUnknown.rawValue, message: "org.bluez is not on the bus") }
        guard !accessRefused else { throw BlueZError(name: DBusError.Name.accessDenied.rawValue, message: "Rejected send message") }
        guard adapterPresent else { throw BlueZError(name: DBusError.Name.unknownObject.rawValue, message: "no adapter") }
    }

    func emit(_ event: BlueZEvent) {
        sink?(event)
        for change in adapterStatus.events(after: event, mirror: mirror, bluetoothd: bluetoothdPresence) { sink?(change) }
    }

    func emit(_ events: [MirrorEvent]) { for event in events { emit(.mirror(event)) } }

    func change(_ path: ObjectPath, _ interface: String, _ properties: InterfaceProperties) {
        emit(mirror.propertiesChanged(path: path, interface: interface, changed: properties, invalidated: [], at: Date()))
    }

    func apply(InterfacesAdded path: ObjectPath, _ interfaces: ObjectInterfaces) {
        emit(mirror.interfacesAdded(path: path, interfaces: interfaces, at: Date()))
    }

    func apply(InterfacesRemoved path: ObjectPath, _ interfaces: [String]) {
        emit(mirror.interfacesRemoved(path: path, interfaces: interfaces))
    }

    func deviceProperties(_ address: BluetoothAddress) -> InterfaceProperties {
        var props: InterfaceProperties = [
            "Address": .string(address.string), "AddressType": .string(address.kind.rawValue), "Adapter": .objectPath(adapterPath),
            "Connected": .boolean(false), "ServicesResolved": .boolean(false), "Paired": .boolean(pairing.bonds.contains(address)),
            "Bonded": .boolean(pairing.bonds.contains(address)), "Trusted": .boolean(pairing.trusted.contains(address)),
            "UUIDs": .array(.string, (world[address]?.advertisedServices ?? []).map { .string($0.string) }),
        ]
        if let name = world[address]?.advertisedName {
            props["Name"] = .string(name)
            props["Alias"] = .string(name)
        }
        return props
    }

    func addDevice(_ address: BluetoothAddress) {
        guard mirror.device(devicePath(address)) == nil else { return }
        apply(InterfacesAdded: devicePath(address), [BlueZInterface.device: deviceProperties(address)])
    }

    /// A peripheral in range advertises: discovery reports it, background
    /// auto-connect links it.
    func advertise(_ address: BluetoothAddress) {
        guard adapterUsable, let peripheral = world[address], peripheral.inRange, !connected.contains(address) else { return }
        // The kernel drops a report without an RSSI when the filter has an RSSI threshold.
        let dropped = discovery?.minimumRSSI != nil && peripheral.rssi == FakePeripheral.rssiNotAvailable
        if let discovery, !dropped, discovery.services.isEmpty || !discovery.services.isDisjoint(with: peripheral.advertisedServices) {
            if mirror.device(devicePath(address)) == nil {
                var props = deviceProperties(address)
                props["RSSI"] = .int16(peripheral.rssi)
                props.merge(Self.advertisingProperties(peripheral.advertisingData)) { $1 }
                apply(InterfacesAdded: devicePath(address), [BlueZInterface.device: props])
            } else {
                var props: InterfaceProperties = ["RSSI": .int16(peripheral.rssi)]
                if let name = peripheral.advertisedName { props["Name"] = .string(name) }
                props.merge(Self.advertisingProperties(peripheral.advertisingData)) { $1 }
                change(devicePath(address), BlueZInterface.device, props)
            }
        }
        autoConnectIfWanted(address)
    }

    func autoConnectIfWanted(_ address: BluetoothAddress) {
        guard let peripheral = world[address], peripheral.inRange, !connected.contains(address), !autoConnectOff.contains(address),
              mirror.device(devicePath(address)) != nil, !autoConnectUUIDs.isDisjoint(with: peripheral.advertisedServices) else { return }
        linkUp(address)
    }

    func linkUp(_ address: BluetoothAddress) {
        addDevice(address)
        connected.insert(address)
        change(devicePath(address), BlueZInterface.device, ["Connected": .boolean(true)])
        if quirks.servicesResolvedBeforeCharacteristics {
            addGatt(address, servicesOnly: true)
            change(devicePath(address), BlueZInterface.device, ["ServicesResolved": .boolean(true)])
        } else {
            addGatt(address)
            change(devicePath(address), BlueZInterface.device, ["ServicesResolved": .boolean(true)])
        }
        if quirks.gapNameInDeviceName, let gap = world[address]?.gapName {
            change(devicePath(address), BlueZInterface.device, ["Name": .string(gap), "Alias": .string(gap)])
        }
    }

    func linkDown(_ address: BluetoothAddress) {
        connected.remove(address)
        releaseWrites(of: address)  // bluetoothd closes acquired sockets: a hang-up for their holder
        for key in sessions where key.address == address {
            if let path = path(of: key) { change(path, BlueZInterface.gattCharacteristic, ["Notifying": .boolean(false)]) }
        }
        change(devicePath(address), BlueZInterface.device, ["ServicesResolved": .boolean(false)])
        let cause = nextLinkEndCause.removeValue(forKey: address) ?? .timeout
        if quirks.disconnectedSignal { emit(mirror.deviceDisconnected(path: devicePath(address), reason: cause.rawValue)) }
        change(devicePath(address), BlueZInterface.device, ["Connected": .boolean(false)])
        advertise(address)  // a peripheral advertises again once its link is gone
    }

    func servicePath(_ address: BluetoothAddress, _ index: Int) -> ObjectPath {
        let handle = 0x10 + (gattGeneration[address, default: 0] * 0x40) + index * 0x08
        return ObjectPath(fakeTrusted: devicePath(address).rawValue + "/service" + hex4(handle))
    }

    func characteristicPath(_ address: BluetoothAddress, _ service: Int, _ index: Int) -> ObjectPath {
        let handle = 0x10 + (gattGeneration[address, default: 0] * 0x40) + service * 0x08 + 1 + index * 2
        return ObjectPath(fakeTrusted: servicePath(address, service).rawValue + "/char" + hex4(handle))
    }

    func hex4(_ value: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A peripheral's GATT objects as bluetoothd exports them on a link.
    func gattObjects(_ address: BluetoothAddress, services: Bool = true, characteristics: Bool = true) -> [(ObjectPath, ObjectInterfaces)] {
        guard let peripheral = world[address] else { return [] }
        var objects: [(ObjectPath, ObjectInterfaces)] = []
        for (s, service) in peripheral.services.enumerated() {
            let sPath = servicePath(address, s)
            if services {
                objects.append((sPath, [BlueZInterface.gattService: [
                    "UUID": .string(service.uuid.string), "Primary": .boolean(service.primary), "Device": .objectPath(devicePath(address)),
                    "Includes": .array(.objectPath, includedServicePaths(address, service).map { .objectPath($0) }),
                ]]))
            }
            guard characteristics else { continue }
            for (c, characteristic) in service.characteristics.enumerated() {
                let key = Key(address: address, service: service.uuid, characteristic: characteristic.uuid)
                var properties: InterfaceProperties = [
                    "UUID": .string(characteristic.uuid.string), "Service": .objectPath(sPath),
                    "Flags": .array(.string, characteristic.flags.map { .string($0) }),
                    "Value": .array(.byte, characteristic.value.map { .byte($0) }),
                    "Notifying": .boolean(sessionArmed(key)),
                    "MTU": .uint16(UInt16(peripheral.mtu)),
                ]
                if characteristic.flags.contains("write-without-response"), characteristic.offersAcquireWrite {
                    properties["WriteAcquired"] = .boolean(acquiredWrites[key] != nil)
                }
                objects.append((characteristicPath(address, s, c), [BlueZInterface.gattCharacteristic: properties]))
                objects += descriptorObjects(address, s, c, characteristic)
            }
        }
        return objects
    }

    func gattObjects(_ address: BluetoothAddress) -> ManagedObjects {
        Dictionary(gattObjects(address, services: true, characteristics: true), uniquingKeysWith: { _, new in new })
    }

    func addGatt(_ address: BluetoothAddress, servicesOnly: Bool = false, characteristicsOnly: Bool = false) {
        for (path, interfaces) in gattObjects(address, services: !characteristicsOnly, characteristics: !servicesOnly)
        where mirror.objects[path] == nil {
            apply(InterfacesAdded: path, interfaces)
        }
    }

    func removeGatt(_ address: BluetoothAddress) {
        let prefix = devicePath(address).rawValue + "/"
        for path in mirror.objects.keys.filter({ $0.rawValue.hasPrefix(prefix) }).sorted().reversed() {
            apply(InterfacesRemoved: path, Array(mirror.objects[path]?.keys ?? [:].keys))
        }
    }

    func address(of device: ObjectPath) throws -> BluetoothAddress {
        guard let address = world.keys.first(where: { devicePath($0) == device }), mirror.device(device) != nil else {
            throw BlueZError(name: DBusError.Name.unknownObject.rawValue, message: "Method \"Connect\" with signature \"\" on interface \"org.bluez.Device1\" doesn't exist")
        }
        return address
    }

    func characteristicKey(_ path: ObjectPath) throws -> (Key, ObjectPath) {
        for (address, peripheral) in world {
            for (s, service) in peripheral.services.enumerated() {
                for (c, characteristic) in service.characteristics.enumerated() where characteristicPath(address, s, c) == path {
                    guard mirror.characteristic(path) != nil else { break }
                    return (Key(address: address, service: service.uuid, characteristic: characteristic.uuid), path)
                }
            }
        }
        throw BlueZError(name: DBusError.Name.unknownObject.rawValue, message: "no characteristic \(path)")
    }

    func path(of key: Key) -> ObjectPath? {
        guard let peripheral = world[key.address] else { return nil }
        for (s, service) in peripheral.services.enumerated() where service.uuid == key.service {
            for (c, characteristic) in service.characteristics.enumerated() where characteristic.uuid == key.characteristic {
                let path = characteristicPath(key.address, s, c)
                return mirror.characteristic(path) != nil ? path : nil
            }
        }
        return nil
    }

    func value(_ key: Key) -> [UInt8]? {
        world[key.address]?.services.first { $0.uuid == key.service }?.characteristics.first { $0.uuid == key.characteristic }?.value
    }

    func setValue(_ key: Key, _ value: [UInt8]) {
        guard var peripheral = world[key.address],
              let s = peripheral.services.firstIndex(where: { $0.uuid == key.service }),
              let c = peripheral.services[s].characteristics.firstIndex(where: { $0.uuid == key.characteristic }) else { return }
        peripheral.services[s].characteristics[c].value = value
        world[key.address] = peripheral
    }}
