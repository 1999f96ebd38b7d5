/// A service a program publishes through relinkd's peripheral role
/// (CoreBluetooth's `CBMutableService`): the layout a remote central
/// discovers (``GattDatabase/Service``'s pieces: UUIDs, CoreBluetooth's
/// property names, descriptors) plus what hosting it needs: permissions,
/// static values and whether relinkd may keep a dynamic value's last value
/// to answer reads while the program is away.
///
/// The one definition type: the API parses it (its JSON, ``json``), the
/// store keeps it, the daemon decides with it, the BlueZ layer exports it.
public struct PublishedService: Sendable, Hashable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Primary (true) or secondary (reachable only as an included service).
    public var isPrimary: Bool
    /// UUIDs of services (published by the same identifier) it includes.
    public var includedServices: [BluetoothUUID]
    /// Its characteristics, in order.
    public var characteristics: [PublishedCharacteristic]

    /// A service.
    public init(uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [PublishedCharacteristic] = []) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }

    /// The layout a central discovers, as ``GattDatabase`` names it.
    public var layout: GattDatabase.Service {
        GattDatabase.Service(uuid: uuid, isPrimary: isPrimary, includedServices: includedServices,
                             characteristics: characteristics.map(\.layout))
    }

    /// The characteristic with `uuid`.
    public func characteristic(_ uuid: BluetoothUUID) -> PublishedCharacteristic? { characteristics.first { $0.uuid == uuid } }
}

/// A characteristic a program publishes (CoreBluetooth's `CBMutableCharacteristic`).
public struct PublishedCharacteristic: Sendable, Hashable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Its properties, by CoreBluetooth's names (``CharacteristicProperties``).
    public var properties: CharacteristicProperties
    /// Who may read and write its value (``AttributePermissions``).
    public var permissions: AttributePermissions
    /// A static value: relinkd answers every read with it, the program is
    /// never asked, and the characteristic cannot be written or notified
    /// (CoreBluetooth's rule for a characteristic created with a value).
    public var value: [UInt8]?
    /// Whether relinkd keeps the last value the program gave it (its
    /// answer to a read, or an update) and answers reads with it while the
    /// program is away, across restarts.
    public var cacheable: Bool
    /// Its descriptors (static values), in order.
    public var descriptors: [PublishedDescriptor]

    /// A characteristic.
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions,
                value: [UInt8]? = nil, cacheable: Bool = false, descriptors: [PublishedDescriptor] = []) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions
        self.value = value
        self.cacheable = cacheable
        self.descriptors = descriptors
    }

    /// BlueZ's `GattCharacteristic1.Flags` for it: each property's BlueZ
    /// flag (``CharacteristicProperties/names``), then the security the
    /// permissions ask for (``AttributePermissions/bluezFlags``): for
    /// notifications at the authenticated or Secure Connections level, the
    /// `-notify` and `-indicate` forms its properties call for.
    public var bluezFlags: [String] {
        var flags = CharacteristicProperties.names.filter { properties.contains($0.property) }.compactMap(\.flags.first)
        flags += AttributePermissions.bluezFlags.filter { permissions.contains($0.permission) }.map(\.flag)
        for (permission, level) in [(AttributePermissions.notifyAuthenticationRequired, "encrypt-authenticated"), (.notifySecureConnectionsRequired, "secure")]
        where permissions.contains(permission) {
            if !properties.isDisjoint(with: [.notify, .notifyEncryptionRequired]) { flags.append("\(level)-notify") }
            if !properties.isDisjoint(with: [.indicate, .indicateEncryptionRequired]) { flags.append("\(level)-indicate") }
        }
        return flags
    }

    /// Whether a central can only write it without response (it has
    /// `writeWithoutResponse` and not `write`): every write is a command.
    public var onlyWithoutResponse: Bool { properties.contains(.writeWithoutResponse) && !properties.contains(.write) }

    /// The layout a central discovers.
    public var layout: GattDatabase.Characteristic {
        GattDatabase.Characteristic(uuid: uuid, flags: bluezFlags, descriptors: descriptors.map {
            GattDatabase.Descriptor(uuid: $0.uuid, flags: $0.bluezFlags)
        })
    }
}

/// A descriptor a program publishes: read-only, with a static value
/// (CoreBluetooth's `CBMutableDescriptor`), readable by anyone or only
/// over a link as secure as its permissions ask.
public struct PublishedDescriptor: Sendable, Hashable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Its value.
    public var value: [UInt8]
    /// Who may read it: `readable` (the default) and at most one of the
    /// read security levels; nothing else (it is never written).
    public var permissions: AttributePermissions

    /// A descriptor.
    public init(uuid: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .readable) {
        self.uuid = uuid
        self.value = value
        self.permissions = permissions
    }

    /// BlueZ's `GattDescriptor1.Flags` for it: `read`, then the read
    /// security level its permissions ask for.
    public var bluezFlags: [String] {
        ["read"] + AttributePermissions.bluezFlags.filter { permissions.contains($0.permission) }.map(\.flag)
    }
}

/// Who may read and write a published characteristic's value
/// (CoreBluetooth's `CBAttributePermissions`).
public struct AttributePermissions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt16
    /// Permissions from bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `readable`.
    public static let readable = AttributePermissions(rawValue: 1 << 0)
    /// `writeable`.
    public static let writeable = AttributePermissions(rawValue: 1 << 1)
    /// `readEncryptionRequired`: only a paired, encrypted link may read.
    public static let readEncryptionRequired = AttributePermissions(rawValue: 1 << 2)
    /// `writeEncryptionRequired`: only a paired, encrypted link may write.
    public static let writeEncryptionRequired = AttributePermissions(rawValue: 1 << 3)

    /// `readAuthenticationRequired`: only an authenticated (MITM-protected)
    /// encrypted link may read (BlueZ's `encrypt-authenticated-read`).
    public static let readAuthenticationRequired = AttributePermissions(rawValue: 1 << 4)
    /// `writeAuthenticationRequired` (BlueZ's `encrypt-authenticated-write`).
    public static let writeAuthenticationRequired = AttributePermissions(rawValue: 1 << 5)
    /// `readSecureConnectionsRequired`: only an LE Secure Connections link
    /// may read (BlueZ's `secure-read`).
    public static let readSecureConnectionsRequired = AttributePermissions(rawValue: 1 << 6)
    /// `writeSecureConnectionsRequired` (BlueZ's `secure-write`).
    public static let writeSecureConnectionsRequired = AttributePermissions(rawValue: 1 << 7)
    /// `notifyAuthenticationRequired`: notifications and indications only
    /// over an authenticated link (BlueZ's `encrypt-authenticated-notify`
    /// / `-indicate`); the encrypted level is the `notifyEncryptionRequired`
    /// property, as in CoreBluetooth.
    public static let notifyAuthenticationRequired = AttributePermissions(rawValue: 1 << 8)
    /// `notifySecureConnectionsRequired` (BlueZ's `secure-notify` / `-indicate`).
    public static let notifySecureConnectionsRequired = AttributePermissions(rawValue: 1 << 9)

    /// Each permission with its CoreBluetooth name (relink's for the
    /// levels CoreBluetooth has no name for), in bit order.
    public static let names: [(permission: AttributePermissions, name: String)] = [
        (.readable, "readable"), (.writeable, "writeable"),
        (.readEncryptionRequired, "readEncryptionRequired"), (.writeEncryptionRequired, "writeEncryptionRequired"),
        (.readAuthenticationRequired, "readAuthenticationRequired"), (.writeAuthenticationRequired, "writeAuthenticationRequired"),
        (.readSecureConnectionsRequired, "readSecureConnectionsRequired"), (.writeSecureConnectionsRequired, "writeSecureConnectionsRequired"),
        (.notifyAuthenticationRequired, "notifyAuthenticationRequired"), (.notifySecureConnectionsRequired, "notifySecureConnectionsRequired"),
    ]

    /// The read and write security levels with BlueZ's flag for each
    /// (`src/gatt-database.c`, `parse_chrc_flags`); ``init(names:)`` takes
    /// these flags as names too.
    public static let bluezFlags: [(permission: AttributePermissions, flag: String)] = [
        (.readEncryptionRequired, "encrypt-read"), (.writeEncryptionRequired, "encrypt-write"),
        (.readAuthenticationRequired, "encrypt-authenticated-read"), (.writeAuthenticationRequired, "encrypt-authenticated-write"),
        (.readSecureConnectionsRequired, "secure-read"), (.writeSecureConnectionsRequired, "secure-write"),
    ]

    /// The security levels of reads, of writes, and of notifications (whose
    /// encrypted level is a property): at most one of each.
    public static let readLevels: AttributePermissions = [.readEncryptionRequired, .readAuthenticationRequired, .readSecureConnectionsRequired]
    /// Write levels.
    public static let writeLevels: AttributePermissions = [.writeEncryptionRequired, .writeAuthenticationRequired, .writeSecureConnectionsRequired]
    /// Notification levels beyond the encrypted one.
    public static let notifyLevels: AttributePermissions = [.notifyAuthenticationRequired, .notifySecureConnectionsRequired]

    /// The names of the permissions set, in bit order.
    public var names: [String] { Self.names.filter { contains($0.permission) }.map(\.name) }

    /// Permissions from their names.
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)`` naming an unknown one.
    public init(names: [String]) throws(DomainError) {
        var value: AttributePermissions = []
        for name in names {
            if let flag = Self.bluezFlags.first(where: { $0.flag == name }) {
                value.insert(flag.permission)
                continue
            }
            guard let entry = Self.names.first(where: { $0.name == name }) else {
                throw .invalidPeripheralRole("unknown permission \(DomainError.echo(name)) (known: \(Self.names.map(\.name).joined(separator: ", ")), or BlueZ's \(Self.bluezFlags.map(\.flag).joined(separator: ", ")))")
            }
            value.insert(entry.permission)
        }
        self = value
    }
}

extension CharacteristicProperties {
    /// Properties from CoreBluetooth's names (``names``).
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)`` naming an unknown one.
    public init(names: [String]) throws(DomainError) {
        var value: CharacteristicProperties = []
        for name in names {
            guard let entry = Self.names.first(where: { $0.name == name }) else {
                throw .invalidPeripheralRole("unknown property \(DomainError.echo(name)) (known: \(Self.names.map(\.name).joined(separator: ", ")))")
            }
            value.insert(entry.property)
        }
        self = value
    }
}
