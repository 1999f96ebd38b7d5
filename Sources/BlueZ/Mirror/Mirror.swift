public import DBus
public import struct Foundation.Date
public import RelinkModel

/// A live, typed copy of bluetoothd's object tree.
///
/// A value type with no I/O: it is built from `GetManagedObjects` on `/` and
/// kept current by applying `InterfacesAdded`, `InterfacesRemoved` and
/// `PropertiesChanged` in bus order; each application returns the typed
/// events it caused. ``BlueZClient`` owns one and feeds it.
///
/// The raw tree (``objects``) stays exactly what bluetoothd exported, so it
/// can be compared with a fresh `GetManagedObjects` at any time.
public struct Mirror: Sendable {
    /// Every object with its interfaces and properties.
    public private(set) var objects: ManagedObjects = [:]
    /// Name tracking per device path.
    private var nameTrackers: [ObjectPath: NameTracker] = [:]
    /// Names learnt from before this mirror's process or snapshot (the
    /// names relinkd stored; those kept across a resynchronisation), per
    /// device path: a device's tracker starts from them (G14).
    private var learnedNames: [ObjectPath: DeviceNames] = [:]

    public init() {}

    /// Builds the mirror from a `GetManagedObjects` reply.
    /// - Parameter names: names already known per device path (kept across
    ///   a resynchronisation).
    ///
    /// A `Name` in the snapshot is of unknown origin (bluetoothd reloads the
    /// last writer's value from its cache), so it is not attributed to
    /// either name: names come from `knownNames` and from changes seen later.
    public init(managedObjects: ManagedObjects, knownNames: [ObjectPath: DeviceNames] = [:], at date: Date = Date()) {
        learnedNames = knownNames
        for (path, interfaces) in managedObjects.sorted(by: { $0.key < $1.key }) {
            nameTrackers[path] = NameTracker(names: knownNames[path] ?? DeviceNames())
            _ = interfacesAdded(path: path, interfaces: interfaces, at: date, attributeName: false)
        }
    }

    // MARK: Applying bus traffic

    /// Applies `InterfacesAdded(path, interfaces)`.
    public mutating func interfacesAdded(path: ObjectPath, interfaces: ObjectInterfaces, at date: Date = Date()) -> [MirrorEvent] {
        interfacesAdded(path: path, interfaces: interfaces, at: date, attributeName: true)
    }

    private mutating func interfacesAdded(path: ObjectPath, interfaces: ObjectInterfaces, at date: Date, attributeName: Bool) -> [MirrorEvent] {
        var events: [MirrorEvent] = []
        var object = objects[path] ?? [:]
        for (name, props) in interfaces {
            if let existing = object[name] {
                // Re-added interface: treat as property updates.
                object[name] = existing.merging(props) { _, new in new }
            } else {
                object[name] = props
            }
        }
        objects[path] = object
        for name in interfaces.keys.sorted() {
            switch name {
            case BlueZInterface.adapter:
                events.append(.adapterAdded(Adapter(path: path, properties: object[name] ?? [:])))
            case BlueZInterface.device:
                let props = object[name] ?? [:]
                var tracker = tracker(path)
                tracker.connectedChanged(props.bool("Connected") ?? false)
                let change = attributeName ? props.string("Name").flatMap { tracker.nameSeen($0, at: date) } : nil
                nameTrackers[path] = tracker
                events.append(.deviceAdded(Device(path: path, properties: props, names: tracker.names)))
                if let change { events.append(.nameChanged(device: path, change)) }
            case BlueZInterface.gattService:
                events.append(.gattServiceAdded(GattService(path: path, properties: object[name] ?? [:])))
            case BlueZInterface.gattCharacteristic:
                let c = GattCharacteristic(path: path, properties: object[name] ?? [:])
                events.append(.gattCharacteristicAdded(c))
                if c.uuid == GAP.deviceNameUUID, let value = c.value {
                    events += gapNameRead(characteristic: path, value: value, at: date)
                }
            case BlueZInterface.gattDescriptor:
                events.append(.gattDescriptorAdded(GattDescriptor(path: path, properties: object[name] ?? [:])))
            case BlueZInterface.gattManager, BlueZInterface.advertisingManager:
                if object[BlueZInterface.adapter] != nil { events.append(.adapterManagerAdded(adapter: path, interface: name)) }
            default:
                break
            }
        }
        return events
    }

    /// Applies `InterfacesRemoved(path, interfaces)`.
    public mutating func interfacesRemoved(path: ObjectPath, interfaces: [String]) -> [MirrorEvent] {
        guard var object = objects[path] else { return [] }
        var events: [MirrorEvent] = []
        for name in interfaces {
            guard let props = object.removeValue(forKey: name) else { continue }
            switch name {
            case BlueZInterface.adapter: events.append(.adapterRemoved(path))
            case BlueZInterface.device:
                nameTrackers[path] = nil
                events.append(.deviceRemoved(path, address: props.string("Address")))
            case BlueZInterface.gattService, BlueZInterface.gattCharacteristic, BlueZInterface.gattDescriptor:
                events.append(.gattObjectRemoved(path))
            default: break
            }
        }
        objects[path] = object.isEmpty ? nil : object
        return events
    }

    /// Applies `PropertiesChanged(interface, changed, invalidated)` on `path`.
    /// Applies `Device1.Disconnected(reason, message)` (BlueZ 5.83 and
    /// later), which bluetoothd sends just before the `Connected=false` of
    /// the same link: a ``MirrorEvent/linkEnded(device:_:)``, carried in
    /// bus order (by the time it is handled the device may be linked again).
    public func deviceDisconnected(path: ObjectPath, reason: String) -> [MirrorEvent] {
        guard objects[path]?[BlueZInterface.device] != nil else { return [] }
        return [.linkEnded(device: path, LinkEndCause(reason: reason))]
    }

    public mutating func propertiesChanged(
        path: ObjectPath, interface: String, changed: InterfaceProperties, invalidated: [String], at date: Date = Date()
    ) -> [MirrorEvent] {
        // Signals for objects or interfaces we do not know are ignored: they
        // can only come from a racing InterfacesRemoved.
        guard var props = objects[path]?[interface] else { return [] }
        var changed = changed
        if interface == BlueZInterface.device, changed.bool("ServicesResolved") == true, changed["Connected"] == nil,
           props.bool("Connected") != true {
            // Resolved services imply a link. Real bluetoothd 5.66 signals
            // `ServicesResolved=true` for the central-side Device1 but never
            // `Connected=true` (issue 20 finding 2); bluetoothd's own state
            // (`Get`) says connected, so the tree still matches it.
            changed["Connected"] = .boolean(true)
        }
        var events: [MirrorEvent] = []
        for (key, new) in changed.sorted(by: { $0.key < $1.key }) {
            let old = props[key]
            props[key] = new
            events.append(.propertyChanged(path: path, interface: interface, property: key, old: old, new: new))
        }
        for key in invalidated where props[key] != nil {
            let old = props.removeValue(forKey: key)
            events.append(.propertyChanged(path: path, interface: interface, property: key, old: old, new: nil))
        }
        objects[path]?[interface] = props

        switch interface {
        case BlueZInterface.device:
            var tracker = tracker(path)
            if let c = changed.bool("Connected") { tracker.connectedChanged(c) }
            if let n = changed.string("Name"), let change = tracker.nameSeen(n, at: date) {
                events.append(.nameChanged(device: path, change))
            }
            nameTrackers[path] = tracker
            if changed.keys.contains(where: Device.advertisingProperties.contains) {
                events.append(.advertisementReported(device: path))
            }
        case BlueZInterface.gattCharacteristic:
            if let value = changed.bytes("Value") {
                events.append(.valueUpdated(valueUpdate(path, characteristic: props, value: value)))
                if props.string("UUID")?.lowercased() == GAP.deviceNameUUID {
                    events += gapNameRead(characteristic: path, value: value, at: date)
                }
            }
        default:
            break
        }
        return events
    }

    /// A value with its routing facts, by direct lookups (no scan of the tree).
    private func valueUpdate(_ path: ObjectPath, characteristic props: InterfaceProperties, value: [UInt8]) -> ValueUpdate {
        let device = devicePath(containing: path)
        let deviceProps = device.flatMap { objects[$0]?[BlueZInterface.device] }
        return ValueUpdate(
            characteristic: path, value: value, characteristicUUID: (props.string("UUID") ?? "").lowercased(),
            serviceUUID: props.path("Service").flatMap { objects[$0]?[BlueZInterface.gattService]?.string("UUID")?.lowercased() },
            device: device, adapter: deviceProps?.path("Adapter"), address: deviceProps?.string("Address"),
            addressType: deviceProps?.string("AddressType"), connected: deviceProps?.bool("Connected") ?? false)
    }

    /// Records a read of the GAP Device Name characteristic.
    public mutating func gapNameRead(characteristic: ObjectPath, value: [UInt8], at date: Date = Date()) -> [MirrorEvent] {
        guard let device = devicePath(containing: characteristic) else { return [] }
        var tracker = tracker(device)
        let change = tracker.gapCharacteristicRead(value, at: date)
        nameTrackers[device] = tracker
        return change.map { [.nameChanged(device: device, $0)] } ?? []
    }

    // MARK: Lookups

    public var adapters: [Adapter] {
        objects.compactMap { path, i in i[BlueZInterface.adapter].map { Adapter(path: path, properties: $0) } }
            .sorted { $0.path < $1.path }
    }

    public func adapter(_ path: ObjectPath) -> Adapter? {
        objects[path]?[BlueZInterface.adapter].map { Adapter(path: path, properties: $0) }
    }

    public var devices: [Device] {
        objects.compactMap { path, _ in device(path) }.sorted { $0.path < $1.path }
    }

    public func device(_ path: ObjectPath) -> Device? {
        objects[path]?[BlueZInterface.device].map {
            Device(path: path, properties: $0, names: nameTrackers[path]?.names ?? DeviceNames())
        }
    }

    /// The device with this address (case-insensitive), optionally on one
    /// adapter; of several, the one with the lowest path.
    ///
    /// Compares the raw properties and builds only the device found: it is
    /// called for every link at start-up, and building (and sorting) every
    /// device for each call made restoring N links cost N^2 (issue 31).
    public func device(address: String, adapter: ObjectPath? = nil) -> Device? {
        firstDevice { p in
            p.string("Address").map { Self.sameIgnoringCase($0, address) } == true
                && (adapter == nil || p.path("Adapter") == adapter)
        }
    }

    /// ``device(address:adapter:)`` for every address at once, in one pass
    /// over the objects (start-up asks it for thousands of peripherals):
    /// the devices, optionally on one adapter, by address in upper case;
    /// of several with one address, the one with the lowest path.
    public func devicesByAddress(adapter: ObjectPath? = nil) -> [String: Device] {
        var paths: [String: ObjectPath] = [:]
        for (path, interfaces) in objects {
            guard let p = interfaces[BlueZInterface.device], let address = p.string("Address"),
                  adapter == nil || p.path("Adapter") == adapter else { continue }
            let key = Self.upperASCII(address)
            if paths[key].map({ path < $0 }) ?? true { paths[key] = path }
        }
        return paths.compactMapValues { device($0) }
    }

    /// Upper case for ASCII text (addresses), Foundation's otherwise.
    static func upperASCII(_ text: String) -> String {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return text.uppercased() }
        return String(decoding: text.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
    }

    /// The device with the lowest path whose `Address` and `AddressType`
    /// satisfy `matches`, as `devices.first(where:)` would find it, but
    /// building only that device.
    public func firstDevice(address matches: (_ address: String?, _ addressType: String?) -> Bool) -> Device? {
        firstDevice { p in matches(p.string("Address"), p.string("AddressType")) }
    }

    private func firstDevice(where matches: (InterfaceProperties) -> Bool) -> Device? {
        var found: ObjectPath?
        for (path, interfaces) in objects {
            guard let p = interfaces[BlueZInterface.device], matches(p) else { continue }
            if found.map({ path < $0 }) ?? true { found = path }
        }
        return found.flatMap { device($0) }
    }

    /// `caseInsensitiveCompare(_:) == .orderedSame`, answered without
    /// Foundation when both strings are ASCII (addresses are), where case
    /// folding is A-Z to a-z and nothing else.
    static func sameIgnoringCase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.allSatisfy({ $0 < 0x80 }), b.utf8.allSatisfy({ $0 < 0x80 }) else {
            return a.caseInsensitiveCompare(b) == .orderedSame
        }
        func folded(_ c: UInt8) -> UInt8 { (0x41...0x5A).contains(c) ? c | 0x20 : c }
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { folded($0) == folded($1) }
    }

    public var connectedDevices: [Device] { devices.filter(\.connected) }

    /// Devices that offer a service UUID (in `UUIDs`, or as a resolved GATT
    /// service), for the already-connected strategy.
    public func devices(offering uuid: String, connectedOnly: Bool = false) -> [Device] {
        let u = uuid.lowercased()
        return devices.filter { d in
            (!connectedOnly || d.connected) && (d.offers(service: u) || services(of: d.path).contains { $0.uuid == u })
        }
    }

    /// A device's services. Only those of `device` are built (not every
    /// service of every device, then filtered: see ``device(address:adapter:)``).
    public func services(of device: ObjectPath) -> [GattService] {
        objects.compactMap { path, i -> GattService? in
            guard let p = i[BlueZInterface.gattService], p.path("Device") == device else { return nil }
            return GattService(path: path, properties: p)
        }
        .sorted { $0.path < $1.path }
    }

    /// A service's characteristics, built only for `service`.
    public func characteristics(of service: ObjectPath) -> [GattCharacteristic] {
        objects.compactMap { path, i -> GattCharacteristic? in
            guard let p = i[BlueZInterface.gattCharacteristic], p.path("Service") == service else { return nil }
            return GattCharacteristic(path: path, properties: p)
        }
        .sorted { $0.path < $1.path }
    }

    public func characteristic(_ path: ObjectPath) -> GattCharacteristic? {
        objects[path]?[BlueZInterface.gattCharacteristic].map { GattCharacteristic(path: path, properties: $0) }
    }

    /// The characteristic with this UUID in a service with this UUID on a device.
    public func characteristic(device: ObjectPath, service: String, characteristic: String) -> GattCharacteristic? {
        let s = service.lowercased(), c = characteristic.lowercased()
        for svc in services(of: device) where svc.uuid == s {
            if let found = characteristics(of: svc.path).first(where: { $0.uuid == c }) { return found }
        }
        return nil
    }

    /// The names known for each device, to carry across a resynchronisation.
    public var knownNames: [ObjectPath: DeviceNames] { learnedNames.merging(nameTrackers.mapValues(\.names)) { $1 } }

    /// Gives each device the names known of it from before (relinkd's
    /// stored names, at its start): what its tracker has not learnt yet is
    /// taken from them, so that a `Name` bluetoothd shows later is
    /// attributed against them: a GAP name bluetoothd reports while the
    /// device shows disconnected stays the GAP name (G14).
    public mutating func learnNames(_ names: [ObjectPath: DeviceNames]) {
        for (path, known) in names {
            learnedNames[path, default: DeviceNames()].fillGaps(from: known)
            guard var tracker = nameTrackers[path] else { continue }
            tracker.learn(known)
            nameTrackers[path] = tracker
        }
    }

    /// A device's tracker: the one kept, else one that starts from the names learnt of it.
    private func tracker(_ path: ObjectPath) -> NameTracker {
        nameTrackers[path] ?? NameTracker(names: learnedNames[path] ?? DeviceNames())
    }

    /// The device object a GATT object belongs to: its nearest ancestor path
    /// that has a Device1 interface.
    public func devicePath(containing path: ObjectPath) -> ObjectPath? {
        var candidate = path
        while let parent = candidate.parent, parent != .root {
            if objects[parent]?[BlueZInterface.device] != nil { return parent }
            candidate = parent
        }
        return nil
    }
}

/// The Generic Access service and its Device Name characteristic.
public enum GAP {
    public static let serviceUUID = "00001800-0000-1000-8000-00805f9b34fb"
    public static let deviceNameUUID = "00002a00-0000-1000-8000-00805f9b34fb"
}
