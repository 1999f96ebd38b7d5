import DBus
import Foundation
import Testing
@testable import BlueZ
import RelinkModel

@Suite struct MirrorTests {
    let hci0 = try! ObjectPath("/org/bluez/hci0")
    let lock = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")
    let gapSvc = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02/service0001")
    let nameChr = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02/service0001/char0002")

    func deviceProps(name: String, connected: Bool = false) -> InterfaceProperties {
        [
            "Address": .string("00:00:00:00:00:02"), "AddressType": .string("public"),
            "Adapter": .objectPath(hci0), "Name": .string(name), "Connected": .boolean(connected),
            "UUIDs": .array(.string, [.string("0000180D-0000-1000-8000-00805F9B34FB")]),
            "RSSI": .int16(-60),
        ]
    }

    /// A notification of `value` on `characteristic`: its value event.
    func notify(_ mirror: inout Mirror, _ characteristic: ObjectPath, _ value: [UInt8]) -> ValueUpdate? {
        let events = mirror.propertiesChanged(path: characteristic, interface: BlueZInterface.gattCharacteristic,
                                              changed: ["Value": .array(.byte, value.map { .byte($0) })], invalidated: [])
        for case .valueUpdated(let update) in events { return update }
        Issue.record("no valueUpdated in \(events)")
        return nil
    }

    @Test func changedPropertiesAreReadWithTheirVariantsUnwrapped() throws {
        let changed = DBusValue.dictionary(key: .string, value: .variant, [
            .init(.string("Value"), .variant(.array(.byte, [.byte(1), .byte(2)]))),
            .init(.string("Nested"), .variant(.variant(.string("x")))),
        ])
        let properties = try changed.interfaceProperties()
        #expect(properties == ["Value": .array(.byte, [.byte(1), .byte(2)]), "Nested": .string("x")])
        #expect(try DBusValue.dictionary(key: .string, value: .variant, []).interfaceProperties().isEmpty)
        for wrong: DBusValue in [.string("Value"), .dictionary(key: .string, value: .string, [.init(.string("a"), .string("b"))]),
                                 .array(.variant, [.variant(.byte(1))])] {
            #expect(throws: DBusError.self) { try wrong.interfaceProperties() }
        }
    }

    /// Real bluetoothd 5.66 signals `ServicesResolved=true` for the
    /// central-side Device1 but not `Connected=true` (issue 20 finding 2):
    /// resolved services imply a link, and the mirror shows it up, with
    /// the `Connected` change first, as if it had been signalled.
    /// bluetoothd 5.82 adds an adapter's peripheral-role managers after the
    /// adapter (gateway finding G13): their arrival is an event, on an
    /// adapter only.
    @Test func anAdaptersManagersAddedLaterAreAnEvent() {
        var mirror = Mirror(managedObjects: [hci0: [BlueZInterface.adapter: ["Powered": .boolean(true)]]])
        let events = mirror.interfacesAdded(path: hci0, interfaces: [BlueZInterface.advertisingManager: [:]])
        #expect(events == [.adapterManagerAdded(adapter: hci0, interface: BlueZInterface.advertisingManager)])
        #expect(mirror.interfacesAdded(path: lock, interfaces: [BlueZInterface.gattManager: [:]]).isEmpty, "not an adapter")
    }

    @Test func servicesResolvedImpliesTheLinkIsUp() {
        var mirror = Mirror(managedObjects: [lock: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")]])
        let events = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device,
                                              changed: ["ServicesResolved": .boolean(true)], invalidated: [])
        #expect(mirror.device(lock)?.connected == true)
        #expect(events.prefix(2) == [
            .propertyChanged(path: lock, interface: BlueZInterface.device, property: "Connected", old: .boolean(false), new: .boolean(true)),
            .propertyChanged(path: lock, interface: BlueZInterface.device, property: "ServicesResolved", old: nil, new: .boolean(true)),
        ])
        // Already up, or going down in the same signal: nothing is implied.
        let again = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device,
                                             changed: ["ServicesResolved": .boolean(true)], invalidated: [])
        #expect(again.count == 1)
        _ = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device,
                                     changed: ["ServicesResolved": .boolean(true), "Connected": .boolean(false)], invalidated: [])
        #expect(mirror.device(lock)?.connected == false)
    }

    /// BlueZ 5.83's `Device1.Disconnected(reason, message)` comes just
    /// before the link's `Connected=false`: one `linkEnded` event with its
    /// cause; an unknown reason name is `unknown`; a device the mirror does
    /// not know is ignored.
    @Test func aLinkEndIsOneEventWithItsCause() throws {
        let mirror = Mirror(managedObjects: [lock: [BlueZInterface.device: deviceProps(name: "RLK-7F3A", connected: true)]])
        #expect(mirror.deviceDisconnected(path: lock, reason: "org.bluez.Reason.Timeout") == [.linkEnded(device: lock, .timeout)])
        #expect(mirror.deviceDisconnected(path: lock, reason: "org.bluez.Reason.Authentication") == [.linkEnded(device: lock, .authentication)])
        #expect(mirror.deviceDisconnected(path: lock, reason: "org.bluez.Reason.SomethingNew") == [.linkEnded(device: lock, .unknown)])
        let stranger = try ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_09")
        #expect(mirror.deviceDisconnected(path: stranger, reason: "org.bluez.Reason.Remote").isEmpty)
    }

    @Test func aValueCarriesItsDeviceFoundByParentPaths() {
        var mirror = Mirror(managedObjects: [
            lock: [BlueZInterface.device: deviceProps(name: "RLK-7F3A", connected: true)],
            gapSvc: [BlueZInterface.gattService: ["UUID": .string("00001800-0000-1000-8000-00805f9b34fb"), "Device": .objectPath(lock)]],
            nameChr: [BlueZInterface.gattCharacteristic: ["UUID": .string("00002a00-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(gapSvc)]],
        ])
        #expect(mirror.devicePath(containing: nameChr) == lock)
        #expect(mirror.devicePath(containing: gapSvc) == lock)
        #expect(mirror.devicePath(containing: hci0) == nil)
        guard let update = notify(&mirror, nameChr, [7]) else { return }
        #expect(update.device == lock)
        #expect(update.address == "00:00:00:00:00:02")
        #expect(update.serviceUUID == "00001800-0000-1000-8000-00805f9b34fb")
        #expect(update.value == [7])
        #expect(update.connected)
    }

    @Test func buildsTypedViewsFromManagedObjects() {
        let mirror = Mirror(managedObjects: [
            hci0: [BlueZInterface.adapter: ["Address": .string("00:00:00:00:00:01"), "Powered": .boolean(true)]],
            lock: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")],
        ])
        #expect(mirror.adapters.map(\.path) == [hci0])
        #expect(mirror.adapter(hci0)?.powered == true)
        let d = mirror.device(address: "00:00:00:00:00:02")
        #expect(d?.path == lock)
        #expect(d?.rssi == -60)
        // A snapshot's Name is of unknown origin: not attributed.
        #expect(d?.name == "RLK-7F3A")
        #expect(d?.names == DeviceNames())
        #expect(mirror.devices(offering: "0000180d-0000-1000-8000-00805f9b34fb").map(\.path) == [lock])
        #expect(mirror.devices(offering: "0000180d-0000-1000-8000-00805f9b34fb", connectedOnly: true).isEmpty)
    }

    /// The lookups that build only what they find (issue 31: restoring N
    /// links cost N^2) answer as the full scans they replaced: the lowest
    /// path of several matches, case ignored, the adapter honoured.
    @Test func lookupsAnswerAsTheFullScansTheyReplaced() throws {
        let hci1 = try ObjectPath("/org/bluez/hci1")
        var tree: ManagedObjects = [:]
        for (adapter, n) in [(hci0, 0), (hci1, 0), (hci0, 1), (hci1, 7), (hci0, 0xAB)] {
            let hex = String(format: "%02X", n)
            let dev = try ObjectPath("\(adapter.description)/dev_00_00_00_00_00_\(hex)")
            tree[dev] = [BlueZInterface.device: [
                "Address": .string("00:00:00:00:00:\(n == 0xAB ? "ab" : hex)"), "AddressType": .string(n == 7 ? "random" : "public"),
                "Adapter": .objectPath(adapter), "Connected": .boolean(true)]]
            for s in 0..<2 {
                let svc = try ObjectPath("\(dev.description)/service000\(s)")
                tree[svc] = [BlueZInterface.gattService: ["UUID": .string("0000180\(s)-0000-1000-8000-00805F9B34FB"), "Device": .objectPath(dev)]]
                for c in 0..<2 {
                    tree[try ObjectPath("\(svc.description)/char000\(c)")] = [BlueZInterface.gattCharacteristic: [
                        "UUID": .string("00002a0\(c)-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(svc),
                        "MTU": .uint16(UInt16(23 + n + c))]]
                }
            }
        }
        let mirror = Mirror(managedObjects: tree)
        for address in ["00:00:00:00:00:00", "00:00:00:00:00:01", "00:00:00:00:00:07", "00:00:00:00:00:AB",
                        "00:00:00:00:00:ab", "00:00:00:00:00:Ab", "00:00:00:00:00:02", "", "00:00:00:00:00:0"] {
            for adapter in [nil, hci0, hci1] {
                let scanned = mirror.devices.first { d in
                    d.address?.caseInsensitiveCompare(address) == .orderedSame && (adapter == nil || d.adapter == adapter)
                }
                #expect(mirror.device(address: address, adapter: adapter) == scanned, "\(address) on \(String(describing: adapter))")
                #expect(mirror.devicesByAddress(adapter: adapter)[address.uppercased()] == scanned, "\(address) on \(String(describing: adapter)), in one pass")
            }
            let byType = mirror.devices.first { $0.address == address && $0.addressType == "public" }
            #expect(mirror.firstDevice(address: { $0 == address && $1 == "public" }) == byType)
        }
        for device in mirror.devices {
            let services = mirror.objects.compactMap { path, i in i[BlueZInterface.gattService].map { GattService(path: path, properties: $0) } }
                .filter { $0.device == device.path }.sorted { $0.path < $1.path }
            #expect(mirror.services(of: device.path) == services)
            #expect(services.count == 2)
            for service in services {
                let chars = mirror.objects.compactMap { path, i in
                    i[BlueZInterface.gattCharacteristic].map { GattCharacteristic(path: path, properties: $0) }
                }.filter { $0.service == service.path }.sorted { $0.path < $1.path }
                #expect(mirror.characteristics(of: service.path) == chars)
                #expect(chars.count == 2)
            }
        }
        #expect(Mirror.sameIgnoringCase("aB:c", "Ab:C"))
        #expect(!Mirror.sameIgnoringCase("ab", "abc"))
        #expect(!Mirror.sameIgnoringCase("a[", "A{"))  // 0x5B and 0x7B are not a case pair
        #expect(Mirror.sameIgnoringCase("é", "É") == ("é".caseInsensitiveCompare("É") == .orderedSame))
    }

    @Test func snapshotKeepsKnownNames() {
        let known = DeviceNames(advertisingName: "RLK-7F3A", gapName: "Front Door")
        let mirror = Mirror(managedObjects: [lock: [BlueZInterface.device: deviceProps(name: "Front Door")]], knownNames: [lock: known])
        #expect(mirror.device(lock)?.names == known)
    }

    /// G14 (docs/real-bluez.md): after a restart, bluetoothd's snapshot
    /// `Name` is not attributed, and its GAP name reported while the device
    /// shows disconnected was taken for the advertising name. With the
    /// names relinkd stored learnt, it stays the GAP name; what is learnt
    /// fills only what the mirror has not seen itself, and holds for a
    /// device that appears later and across a resynchronisation.
    @Test func learntNamesKeepTheGAPNameAfterARestart() {
        let stored = DeviceNames(advertisingName: "RLK-7F3A", gapName: "Front Door")
        let objects: ManagedObjects = [lock: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")]]
        let nameChange = ["Name": DBusValue.string("Front Door")]
        var fresh = Mirror(managedObjects: objects)
        let unseeded = fresh.propertiesChanged(path: lock, interface: BlueZInterface.device, changed: nameChange, invalidated: [])
        #expect(unseeded.contains(.nameChanged(device: lock, NameChange(source: .advertising, previous: nil, current: "Front Door"))),
                "the fault: nothing to tell it from")

        var mirror = Mirror(managedObjects: objects)
        mirror.learnNames([lock: stored])
        let seeded = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device, changed: nameChange, invalidated: [])
        #expect(!seeded.contains { if case .nameChanged(_, let change) = $0 { change.source == .advertising } else { false } }, "\(seeded)")
        #expect(mirror.device(lock)?.names.advertisingName == "RLK-7F3A" && mirror.device(lock)?.names.gapName == "Front Door")

        var later = Mirror()
        later.learnNames([lock: stored])
        _ = later.interfacesAdded(path: lock, interfaces: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")])
        #expect(later.device(lock)?.names.gapName == "Front Door", "a device that appears after: its tracker starts from them")
        later.learnNames([lock: DeviceNames(advertisingName: "old", gapName: "Old Door")])
        #expect(later.device(lock)?.names.advertisingName == "RLK-7F3A" && later.device(lock)?.names.gapName == "Front Door", "only gaps are filled")
        #expect(Mirror(managedObjects: [:], knownNames: later.knownNames).knownNames[lock]?.gapName == "Front Door", "kept across a resync")
    }

    @Test func gapNameFromNameChangeAfterConnect() {
        var mirror = Mirror()
        _ = mirror.interfacesAdded(path: lock, interfaces: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")])
        let e1 = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device, changed: ["Connected": .boolean(true)], invalidated: [])
        #expect(e1 == [.propertyChanged(path: lock, interface: BlueZInterface.device, property: "Connected", old: .boolean(false), new: .boolean(true))])
        let e2 = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device, changed: ["Name": .string("Front Door")], invalidated: [])
        #expect(e2.contains(.nameChanged(device: lock, NameChange(source: .gap, previous: nil, current: "Front Door"))))
        #expect(mirror.device(lock)?.names.advertisingName == "RLK-7F3A")
        #expect(mirror.device(lock)?.names.gapName == "Front Door")
        #expect(mirror.device(lock)?.connected == true)
    }

    @Test func gattValueNotificationsAndExportedGAPCharacteristic() {
        var mirror = Mirror()
        _ = mirror.interfacesAdded(path: lock, interfaces: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")])
        _ = mirror.propertiesChanged(path: lock, interface: BlueZInterface.device, changed: ["Connected": .boolean(true)], invalidated: [])
        _ = mirror.interfacesAdded(path: gapSvc, interfaces: [BlueZInterface.gattService: ["UUID": .string(GAP.serviceUUID), "Device": .objectPath(lock)]])
        _ = mirror.interfacesAdded(path: nameChr, interfaces: [BlueZInterface.gattCharacteristic: [
            "UUID": .string(GAP.deviceNameUUID), "Service": .objectPath(gapSvc), "Flags": .array(.string, [.string("read")]),
        ]])
        #expect(mirror.characteristic(device: lock, service: "00001800-0000-1000-8000-00805F9B34FB", characteristic: GAP.deviceNameUUID)?.path == nameChr)
        let bytes = Array("Front Door".utf8)
        let events = mirror.propertiesChanged(path: nameChr, interface: BlueZInterface.gattCharacteristic,
                                              changed: ["Value": .array(.byte, bytes.map { .byte($0) })], invalidated: [])
        // The value comes with its routing facts, as they were when it arrived.
        #expect(events.contains(.valueUpdated(ValueUpdate(
            characteristic: nameChr, value: bytes, characteristicUUID: GAP.deviceNameUUID, serviceUUID: GAP.serviceUUID.lowercased(),
            device: lock, adapter: hci0, address: "00:00:00:00:00:02", addressType: "public", connected: true))))
        #expect(events.contains(.nameChanged(device: lock, NameChange(source: .gap, previous: nil, current: "Front Door"))))
        #expect(mirror.device(lock)?.names.gapNameSource == .characteristic)
        #expect(mirror.device(lock)?.names.advertisingName == "RLK-7F3A")
    }

    @Test func valueOfAnUnplacedCharacteristicCarriesWhatIsKnown() {
        var mirror = Mirror()
        _ = mirror.interfacesAdded(path: lock, interfaces: [BlueZInterface.device: deviceProps(name: "RLK-7F3A")])
        // Its service object never arrived (a racing InterfacesRemoved).
        _ = mirror.interfacesAdded(path: nameChr, interfaces: [BlueZInterface.gattCharacteristic: [
            "UUID": .string("8E7F1A01-4B2C-4D1E-9A3F-72656C696E6B"), "Service": .objectPath(gapSvc),
        ]])
        guard let update = notify(&mirror, nameChr, [7]) else { return }
        #expect(update.serviceUUID == nil)
        #expect(update.characteristicUUID == "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b")
        #expect(update.device == lock)
        #expect(update.connected == false)
        #expect(update.value == [7])
    }

    @Test func removalDropsObjectsAndTellsAddress() {
        var mirror = Mirror(managedObjects: [lock: [BlueZInterface.device: deviceProps(name: "X")]])
        let events = mirror.interfacesRemoved(path: lock, interfaces: [BlueZInterface.device])
        #expect(events == [.deviceRemoved(lock, address: "00:00:00:00:00:02")])
        #expect(mirror.objects.isEmpty)
        #expect(mirror.device(lock) == nil)
        // A late PropertiesChanged for a removed object is ignored.
        #expect(mirror.propertiesChanged(path: lock, interface: BlueZInterface.device, changed: ["RSSI": .int16(-1)], invalidated: []).isEmpty)
    }

    /// Applies a seeded random sequence of adds, removes, changes and
    /// invalidations to the mirror and to a plain reference tree, and
    /// checks they end up equal: the mirror's raw tree is exactly what the
    /// signals describe.
    @Test(arguments: [1, 2, 3, 42, 1234])
    func randomSequenceMatchesReference(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var mirror = Mirror()
        var reference: ManagedObjects = [:]
        let interfaces = [BlueZInterface.device, BlueZInterface.gattService, BlueZInterface.gattCharacteristic, "org.example.Other1"]
        let keys = ["Name", "RSSI", "Connected", "UUID", "Value", "Alias"]
        func randomValue() -> DBusValue {
            switch rng.next() % 4 {
            case 0: .string("v\(rng.next() % 100)")
            case 1: .int16(Int16(truncatingIfNeeded: rng.next()))
            case 2: .boolean(rng.next() % 2 == 0)
            default: .array(.byte, (0..<Int(rng.next() % 5)).map { _ in .byte(UInt8(truncatingIfNeeded: rng.next())) })
            }
        }
        for _ in 0..<2000 {
            let path = try ObjectPath("/org/bluez/hci0/dev_\(rng.next() % 6)" + (rng.next() % 2 == 0 ? "" : "/service\(rng.next() % 3)"))
            let iface = interfaces[Int(rng.next() % UInt64(interfaces.count))]
            switch rng.next() % 3 {
            case 0:
                var props: InterfaceProperties = [:]
                for _ in 0..<Int(rng.next() % 4) { props[keys[Int(rng.next() % UInt64(keys.count))]] = randomValue() }
                _ = mirror.interfacesAdded(path: path, interfaces: [iface: props])
                reference[path, default: [:]][iface, default: [:]].merge(props) { _, n in n }
            case 1:
                _ = mirror.interfacesRemoved(path: path, interfaces: [iface])
                reference[path]?[iface] = nil
                if reference[path]?.isEmpty == true { reference[path] = nil }
            default:
                let key = keys[Int(rng.next() % UInt64(keys.count))]
                let invalidate = rng.next() % 5 == 0
                let value = randomValue()
                _ = mirror.propertiesChanged(path: path, interface: iface, changed: invalidate ? [:] : [key: value], invalidated: invalidate ? [key] : [])
                if reference[path]?[iface] != nil {
                    reference[path]?[iface]?[key] = invalidate ? nil : value
                }
            }
        }
        #expect(mirror.objects == reference)
    }
}


extension MirrorTests {
    // MARK: The adapter's status

    func adapterProps(powered: Bool, powerState: String? = nil, roles: [String] = ["central", "peripheral", "central-peripheral"]) -> InterfaceProperties {
        var props: InterfaceProperties = ["Address": .string("00:00:00:00:00:01"), "Powered": .boolean(powered),
                                          "Roles": .array(.string, roles.map { .string($0) })]
        if let powerState { props["PowerState"] = .string(powerState) }
        return props
    }

    @Test func theAdapterStatusFollowsPoweredAndTellsBlockedFromOff() {
        let all: [AdapterRole] = [.central, .peripheral, .centralPeripheral]
        func status(_ props: InterfaceProperties, _ presence: BluetoothdPresence = .present) -> AdapterStatus {
            Mirror(managedObjects: [hci0: [BlueZInterface.adapter: props]]).adapterStatus(of: hci0, bluetoothd: presence)
        }
        #expect(status(adapterProps(powered: true, powerState: "on")) == AdapterStatus(.poweredOn, roles: all))
        #expect(status(adapterProps(powered: true, powerState: "on-disabling")) == AdapterStatus(.poweredOff, roles: all),
                "going off: its links are about to drop (G10)")
        #expect(status(adapterProps(powered: false, powerState: "off-enabling")) == AdapterStatus(.poweredOff, roles: all))
        #expect(status(adapterProps(powered: false, powerState: "off")) == AdapterStatus(.poweredOff, roles: all))
        #expect(status(adapterProps(powered: false, powerState: "off-blocked")) == AdapterStatus(.blocked, roles: all))
        #expect(status(adapterProps(powered: false)) == AdapterStatus(.poweredOff, roles: all), "BlueZ < 5.64: no PowerState")
        #expect(status(adapterProps(powered: true, roles: ["central", "observer"])) == AdapterStatus(.poweredOn, roles: [.central]),
                "a role this build does not know is left out")
        #expect(status(adapterProps(powered: true, roles: [])) == AdapterStatus(.poweredOn))
        #expect(Mirror().adapterStatus(of: hci0, bluetoothd: .present) == AdapterStatus(.missing))
        #expect(status(adapterProps(powered: true), .absent) == AdapterStatus(.bluetoothdMissing))
        #expect(status(adapterProps(powered: true), .refused) == AdapterStatus(.notPermitted))
    }

    @Test func theReporterTellsEachChangeOfAWatchedAdapterOnceAndIgnoresValues() throws {
        var mirror = Mirror(managedObjects: [hci0: [BlueZInterface.adapter: adapterProps(powered: true, powerState: "on")]])
        var reporter = AdapterStatusReporter()
        let hci1 = try ObjectPath("/org/bluez/hci1")
        #expect(reporter.watch(hci0, mirror: mirror, bluetoothd: .present).state == .poweredOn)
        #expect(reporter.watch(hci1, mirror: mirror, bluetoothd: .present).state == .missing)
        func apply(_ changed: InterfaceProperties) -> [BlueZEvent] {
            mirror.propertiesChanged(path: hci0, interface: BlueZInterface.adapter, changed: changed, invalidated: [])
                .flatMap { reporter.events(after: .mirror($0), mirror: mirror, bluetoothd: .present) }
        }
        #expect(apply(["PowerState": .string("on-disabling")]).map(\.adapterState) == [AdapterState.poweredOff], "told at once")
        #expect(apply(["Powered": .boolean(false), "PowerState": .string("off")]).isEmpty, "no second change")
        #expect(apply(["Discovering": .boolean(false)]).isEmpty)
        #expect(apply(["PowerState": .string("off-blocked")]).map(\.adapterState) == [AdapterState.blocked])
        let value = BlueZEvent.mirror(.valueUpdated(ValueUpdate(characteristic: nameChr, value: [1], characteristicUUID: GAP.deviceNameUUID)))
        #expect(reporter.events(after: value, mirror: Mirror(), bluetoothd: .absent).isEmpty, "only events that can change it are looked at")
        let removed = mirror.interfacesRemoved(path: hci0, interfaces: [BlueZInterface.adapter])
        #expect(removed.flatMap { reporter.events(after: .mirror($0), mirror: mirror, bluetoothd: .present) }.map(\.adapterState)
            == [.missing], "hci0 gone; hci1 was missing already")
        #expect(reporter.events(after: .serviceLost, mirror: Mirror(), bluetoothd: .absent).map(\.adapterState)
            == [.bluetoothdMissing, .bluetoothdMissing], "both watched adapters")
    }
}

extension BlueZEvent {
    /// The state an `adapterStatus` event reports.
    var adapterState: AdapterState? {
        if case .adapterStatus(_, let status) = self { return status.state }
        return nil
    }
}
