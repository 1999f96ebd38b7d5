public import DBus
public import RelinkModel

/// One identifier's peripheral role as bluetoothd is to see it: a GATT
/// application (an object manager at ``root`` with a `GattService1`,
/// `GattCharacteristic1` and `GattDescriptor1` object per published
/// attribute) and, while advertising, an `LEAdvertisement1` object.
/// Registered with `GattManager1.RegisterApplication` and
/// `LEAdvertisingManager1.RegisterAdvertisement` of one adapter.
public struct HostedApplication: Sendable, Hashable {
    /// Where the application's object manager is exported.
    public var root: ObjectPath
    /// The services, in export order: as published, except that an
    /// included service comes before the services that include it
    /// (``includedFirst(_:)``).
    public var services: [PublishedService]
    /// The advertisement, while advertising.
    public var advertisement: PeripheralAdvertisement?

    /// An application; `services` are put in export order
    /// (``includedFirst(_:)``).
    public init(root: ObjectPath, services: [PublishedService], advertisement: PeripheralAdvertisement?) {
        self.root = root
        self.services = Self.includedFirst(services)
        self.advertisement = advertisement
    }

    /// The services in the published order, except that each included
    /// service is moved before the first service that includes it.
    /// bluetoothd (5.66, `gatt-database.c` `include_services()`) adds an
    /// application's services in the order of its objects and fails an
    /// include of a service it has not added yet: the include is then
    /// missing on the remote central's side (seen on the real-bluetoothd
    /// bench with the bench lock, session 12). In a cycle of includes the
    /// service met again is left where it already is.
    public static func includedFirst(_ services: [PublishedService]) -> [PublishedService] {
        var ordered: [PublishedService] = []
        var placed = Set<BluetoothUUID>()
        var visiting = Set<BluetoothUUID>()
        func place(_ service: PublishedService) {
            guard !placed.contains(service.uuid), visiting.insert(service.uuid).inserted else { return }
            for included in service.includedServices {
                if let target = services.first(where: { $0.uuid == included }) { place(target) }
            }
            ordered.append(service)
            placed.insert(service.uuid)
        }
        services.forEach(place)
        return ordered
    }

    /// `service<iii>` under the root, zero-padded so that bluetoothd, which
    /// takes the objects in path order, takes them in export order.
    public func servicePath(_ index: Int) -> ObjectPath {
        let digits = String(index)
        return (try? root.appending("service" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits)) ?? root
    }
    /// `service<i>/char<j>`.
    public func characteristicPath(_ service: Int, _ index: Int) -> ObjectPath {
        (try? servicePath(service).appending("char\(index)")) ?? root
    }
    /// `service<i>/char<j>/desc<k>`.
    public func descriptorPath(_ service: Int, _ characteristic: Int, _ index: Int) -> ObjectPath {
        (try? characteristicPath(service, characteristic).appending("desc\(index)")) ?? root
    }
    /// The advertisement's object (outside the application's object manager
    /// would be as good; bluetoothd ignores interfaces it does not know).
    public var advertisementPath: ObjectPath { (try? root.appending("advertisement")) ?? root }

    /// The characteristic at `key`, with its object's path.
    public func characteristicPath(of key: CharacteristicKey) -> ObjectPath? {
        guard let s = services.firstIndex(where: { $0.uuid == key.service }),
              let c = services[s].characteristics.firstIndex(where: { $0.uuid == key.characteristic }) else { return nil }
        return characteristicPath(s, c)
    }
}

/// A remote central's request to a hosted characteristic, as bluetoothd
/// passes it to the application.
public enum HostedRequest: Sendable, Hashable {
    /// `ReadValue` (with its `offset`; `central` from its `device` option,
    /// `mtu` from its `mtu` option, nil without one).
    case read(CharacteristicKey, offset: Int, central: String, mtu: Int? = nil)
    /// `WriteValue` (`kind` from its `type` option, ``WriteKind/init(option:onlyWithoutResponse:)``;
    /// `command` whenever bluetoothd expects no reply: it answered the central itself).
    case write(CharacteristicKey, value: [UInt8], offset: Int, kind: WriteKind, central: String, mtu: Int? = nil)
    /// `StartNotify` (bluetoothd 5.66 does not say which central).
    case startNotify(CharacteristicKey, central: String)
    /// `StopNotify`.
    case stopNotify(CharacteristicKey, central: String)
    /// bluetoothd called `LEAdvertisement1.Release`: the advertisement is
    /// no longer registered (a SIGTERMed bluetoothd does so as it exits).
    case advertisementReleased
}

/// What the application answers bluetoothd.
public enum HostedReply: Sendable, Hashable {
    /// A read's value.
    case value([UInt8])
    /// A write, `StartNotify` or `StopNotify` done.
    case done
    /// An ATT error for the central.
    case error(ATTError)
}

/// Who answers the hosted applications' requests: the root of the
/// application, and the request.
public typealias HostedRequestHandler = @Sendable (ObjectPath, HostedRequest) async -> HostedReply

/// The central a request's options name: the `device` option's address
/// (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` → `AA:BB:CC:DD:EE:FF`), else
/// ``PeripheralManagerRecord/unnamedCentral``.
func centralName(_ options: [String: DBusValue]) -> String {
    guard case .objectPath(let path)? = options["device"]?.unwrapped, let address = Device.address(inPath: path) else {
        return PeripheralManagerRecord.unnamedCentral
    }
    return address
}
