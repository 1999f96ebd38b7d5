public import BlueZ
public import DBus
public import RelinkModel

/// The fake bluetoothd's side of the peripheral role: applications and
/// advertisements registered with it (forgotten when it restarts, kept
/// across an adapter power cycle, as bluetoothd 5.66 does), and a remote
/// central a test plays: it reads, writes, subscribes, and receives the
/// notifications bluetoothd would send it.
struct FakeHosting: Sendable {
    var handler: HostedRequestHandler?
    /// Exported by the client, by root.
    var exported: [ObjectPath: HostedApplication] = [:]
    /// Registered with this bluetoothd.
    var applications: Set<ObjectPath> = []
    var advertisements: Set<ObjectPath> = []
    /// Every successful registration, in order: (root, kind).
    var registrations: [(root: ObjectPath, advertisement: Bool)] = []
    /// Characteristics the remote central subscribed to (its CCCDs), by root.
    var subscribed: Set<HostedKey> = []
    /// Values the remote central received, by root and characteristic.
    var received: [HostedKey: [[UInt8]]] = [:]
    /// `notifyHosted` calls made; the first of them waits for a second
    /// while `holdingFirstNotification` (``FakeBlueZ/holdFirstNotification()``).
    var notifyCalls = 0
    var holdingFirstNotification = false
    /// The controller's advertising instances (nil: no limit), ``FakeBlueZ/setAdvertisingInstances(_:)``.
    var advertisingInstances: Int?
    /// `host` and `registerAdvertisement(root:adapter:)` calls the client made.
    var hostingCalls = 0
    /// The adapter has no `GattManager1` and `LEAdvertisingManager1` yet
    /// (``FakeBlueZ/withholdPeripheralManagers()``): registrations are
    /// answered `UnknownMethod`, as bluetoothd 5.82 answers them between
    /// adding the adapter and its managers.
    var managersWithheld = false
}

/// A hosted characteristic: its application's root and its key.
public struct HostedKey: Sendable, Hashable {
    /// The application's root.
    public var root: ObjectPath
    /// The characteristic.
    public var key: CharacteristicKey
    /// A hosted characteristic.
    public init(root: ObjectPath, key: CharacteristicKey) {
        self.root = root
        self.key = key
    }
}

extension FakeBlueZ {
    // MARK: HostingPort

    /// Sets who answers the hosted applications' requests.
    public func setHostedRequestHandler(_ handler: @escaping HostedRequestHandler) {
        hosting.handler = handler
    }

    /// Exports the application and registers it and its advertisement
    /// when bluetoothd is there and the adapter on.
    /// - Throws: ``BlueZError`` as bluetoothd 5.66: `Failed` for an
    ///   application with GAP or GATT.
    public func host(_ application: HostedApplication, adapter: ObjectPath) async throws {
        // Registered anew: bluetoothd removes the old services and the
        // remote central's CCCD states with them (`remove_device_ccc`).
        hosting.hostingCalls += 1
        if hosting.applications.remove(application.root) != nil { hosting.subscribed = hosting.subscribed.filter { $0.root != application.root } }
        hosting.advertisements.remove(application.root)
        hosting.exported[application.root] = application
        guard adapterUsable else { return }
        if hosting.managersWithheld {
            throw BlueZError(name: "org.freedesktop.DBus.Error.UnknownMethod",
                             message: "Method \"RegisterApplication\" with signature \"oa{sv}\" on interface \"org.bluez.GattManager1\" doesn't exist")
        }
        if application.services.contains(where: { PublishedService.reservedServices.contains($0.uuid) }) {
            throw BlueZError(name: "org.bluez.Error.Failed", message: "Failed to create entry in database")
        }
        if !application.services.isEmpty {
            hosting.applications.insert(application.root)
            hosting.registrations.append((application.root, false))
        }
        if application.advertisement != nil { try registerAdvertisement(application.root) }
    }

    /// Whether the application's services are registered with this bluetoothd.
    public func servicesRegistered(root: ObjectPath, adapter: ObjectPath) async -> Bool {
        hosting.applications.contains(root)
    }

    /// Unregisters and forgets an application.
    public func unhost(root: ObjectPath, adapter: ObjectPath) async throws {
        hosting.applications.remove(root)
        hosting.advertisements.remove(root)
        hosting.exported[root] = nil
    }

    /// Delivers a value to the remote central when it subscribed and the
    /// application is registered (as bluetoothd sends notifications only
    /// on an enabled CCCD).
    public func notifyHosted(root: ObjectPath, _ key: CharacteristicKey, _ value: [UInt8]) async throws {
        guard hosting.exported[root]?.characteristicPath(of: key) != nil else {
            throw BlueZError(name: "org.bluez.Error.DoesNotExist", message: "\(key) is not hosted at \(root)")
        }
        hosting.notifyCalls += 1
        if hosting.holdingFirstNotification {
            hosting.holdingFirstNotification = false
            await waitForASecondNotification()
        }
        let hosted = HostedKey(root: root, key: key)
        guard hosting.applications.contains(root), hosting.subscribed.contains(hosted) else { return }
        hosting.received[hosted, default: []].append(value)
    }

    /// bluetoothd forgets every registration (it stopped).
    func forgetHosting() {
        hosting.applications = []
        hosting.advertisements = []
        hosting.subscribed = []
    }

    /// The client (relinkd) left the bus: bluetoothd unregisters its
    /// applications and advertisements, and forgets its agent, as it does
    /// when their owner's connection closes.
    public func clientLeftBus() {
        forgetHosting()
        pairing.exported = nil  // the agent object went with the connection
    }

    /// From now on the adapter has no peripheral-role managers: bluetoothd
    /// 5.82 right after a restart, before it adds them to the adapter.
    public func withholdPeripheralManagers() { hosting.managersWithheld = true }

    /// bluetoothd adds `GattManager1` and `LEAdvertisingManager1` to the
    /// adapter (`InterfacesAdded`).
    public func peripheralManagersAppear() {
        hosting.managersWithheld = false
        emit([.adapterManagerAdded(adapter: adapterPath, interface: BlueZInterface.gattManager),
              .adapterManagerAdded(adapter: adapterPath, interface: BlueZInterface.advertisingManager)])
    }

    // MARK: The remote central, as a test plays it

    /// Whether bluetoothd has the application at `root` registered.
    public func isApplicationRegistered(_ root: ObjectPath) -> Bool { hosting.applications.contains(root) }
    /// Whether bluetoothd advertises the application's advertisement.
    public func isAdvertising(_ root: ObjectPath) -> Bool { hosting.advertisements.contains(root) }
    /// The services a remote central discovers at `root` (none when not registered).
    public func hostedServices(_ root: ObjectPath) -> [PublishedService] {
        hosting.applications.contains(root) ? hosting.exported[root]?.services ?? [] : []
    }
    /// The advertisement registered at `root`, if any.
    public func hostedAdvertisement(_ root: ObjectPath) -> PeripheralAdvertisement? {
        hosting.advertisements.contains(root) ? hosting.exported[root]?.advertisement : nil
    }
    /// How many registrations (applications and advertisements) bluetoothd has accepted.
    public var hostingRegistrationCount: Int { hosting.registrations.count }
    /// How many times the client asked to host an application or to
    /// register its advertisement alone.
    public var hostingCallCount: Int { hosting.hostingCalls }
    /// How many application (services) registrations bluetoothd has accepted.
    public var applicationRegistrationCount: Int { hosting.registrations.filter { !$0.advertisement }.count }
    /// The values the remote central received from a characteristic.
    public func received(_ root: ObjectPath, _ key: CharacteristicKey) -> [[UInt8]] { hosting.received[HostedKey(root: root, key: key)] ?? [] }

    /// A remote central reads a characteristic: bluetoothd calls `ReadValue`
    /// and answers with what relinkd replies (static values are answered by
    /// bluetoothd itself from the exported `Value`, as it does).
    public func remoteRead(_ root: ObjectPath, _ key: CharacteristicKey, offset: Int = 0, central: String = "11:22:33:44:55:66",
                           mtu: Int? = nil) async -> HostedReply {
        guard hosting.applications.contains(root), let characteristic = hosting.exported[root]?.services
            .first(where: { $0.uuid == key.service })?.characteristic(key.characteristic) else { return .error(.requestNotSupported) }
        guard characteristic.properties.contains(.read) else { return .error(.readNotPermitted) }
        guard let handler = hosting.handler else { return .error(.unlikelyError) }
        return await handler(root, .read(key, offset: offset, central: central, mtu: mtu))
    }

    /// A remote central writes a characteristic (`WriteValue`, with the
    /// write's kind as the bench's BlueZoo passes it in `type`).
    public func remoteWrite(_ root: ObjectPath, _ key: CharacteristicKey, _ value: [UInt8], offset: Int = 0, withResponse: Bool = true,
                            kind: WriteKind? = nil, central: String = "11:22:33:44:55:66", mtu: Int? = nil) async -> HostedReply {
        guard hosting.applications.contains(root), let handler = hosting.handler else { return .error(.requestNotSupported) }
        let kind = kind ?? (withResponse ? .request : .command)
        return await handler(root, .write(key, value: value, offset: offset, kind: kind, central: central, mtu: mtu))
    }

    /// A remote central enables (or disables) notifications: bluetoothd
    /// calls `StartNotify` for the first subscriber (`StopNotify` for the last).
    public func remoteSubscribe(_ root: ObjectPath, _ key: CharacteristicKey, _ on: Bool = true) async -> HostedReply {
        guard hosting.applications.contains(root), let handler = hosting.handler else { return .error(.requestNotSupported) }
        let hosted = HostedKey(root: root, key: key)
        if on { hosting.subscribed.insert(hosted) } else { hosting.subscribed.remove(hosted) }
        return await handler(root, on ? .startNotify(key, central: PeripheralManagerRecord.unnamedCentral)
                                       : .stopNotify(key, central: PeripheralManagerRecord.unnamedCentral))
    }
}
