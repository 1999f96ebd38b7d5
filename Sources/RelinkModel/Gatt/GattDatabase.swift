#if canImport(FoundationEssentials)
public import struct FoundationEssentials.Date
#else
public import struct Foundation.Date
#endif

/// A peripheral's GATT database as a central discovered it: its services
/// in handle order, each with its included services, characteristics and
/// their descriptors (CoreBluetooth's `discoverServices`,
/// `discoverIncludedServices`, `discoverCharacteristics`,
/// `discoverDescriptors` all at once; bleak's `client.services`), and when
/// it was read from bluetoothd.
///
/// The one type for it: the BlueZ layer builds it from bluetoothd's
/// objects, the store keeps it (as ``json``), the daemon compares it, the
/// API sends it (the same JSON), relinkctl and the client library decode it.
public struct GattDatabase: Sendable, Hashable {
    /// The services, in handle order (primary and secondary).
    public var services: [Service]
    /// When relinkd read it from bluetoothd (a restored database may be old:
    /// the peripheral may have changed since).
    public var readAt: Date

    /// A database.
    public init(services: [Service], readAt: Date) {
        self.services = services
        self.readAt = readAt
    }

    /// Whether two databases have the same services, characteristics,
    /// descriptors, properties and inclusions (when each was read aside).
    public func sameLayout(as other: GattDatabase) -> Bool { services == other.services }

    /// The first service with `uuid`.
    public func service(_ uuid: BluetoothUUID) -> Service? { services.first { $0.uuid == uuid } }

    /// A service (CoreBluetooth's `CBService`).
    public struct Service: Sendable, Hashable {
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// Primary (true) or secondary (only reachable as an included service).
        public var isPrimary: Bool
        /// The UUIDs of the services it includes, in handle order.
        public var includedServices: [BluetoothUUID]
        /// Its characteristics, in handle order.
        public var characteristics: [Characteristic]

        /// A service.
        public init(uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                    characteristics: [Characteristic] = []) {
            self.uuid = uuid
            self.isPrimary = isPrimary
            self.includedServices = includedServices
            self.characteristics = characteristics
        }

        /// The first characteristic with `uuid`.
        public func characteristic(_ uuid: BluetoothUUID) -> Characteristic? { characteristics.first { $0.uuid == uuid } }
    }

    /// A characteristic (CoreBluetooth's `CBCharacteristic`).
    public struct Characteristic: Sendable, Hashable {
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// BlueZ's `Flags` as bluetoothd gave them (`read`, `write-without-response`,
        /// `notify`, `encrypt-read`, ...).
        public var flags: [String]
        /// Its descriptors, in handle order.
        public var descriptors: [Descriptor]

        /// A characteristic.
        public init(uuid: BluetoothUUID, flags: [String], descriptors: [Descriptor] = []) {
            self.uuid = uuid
            self.flags = flags
            self.descriptors = descriptors
        }

        /// Its properties as CoreBluetooth names them, from ``flags``.
        public var properties: CharacteristicProperties { CharacteristicProperties(bluezFlags: flags) }

        /// The first descriptor with `uuid`.
        public func descriptor(_ uuid: BluetoothUUID) -> Descriptor? { descriptors.first { $0.uuid == uuid } }
    }

    /// A descriptor (CoreBluetooth's `CBDescriptor`).
    public struct Descriptor: Sendable, Hashable {
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// BlueZ's `Flags` (`read`, `write`, ...; bluetoothd may leave them empty).
        public var flags: [String]

        /// A descriptor.
        public init(uuid: BluetoothUUID, flags: [String] = []) {
            self.uuid = uuid
            self.flags = flags
        }
    }

    /// The Client Characteristic Configuration descriptor (0x2902): relinkd's
    /// subscriptions own it, so a program may read it but not write it.
    public static let clientCharacteristicConfiguration = BluetoothUUID(shortValue: 0x2902)
    /// The Characteristic User Description descriptor (0x2901).
    public static let userDescription = BluetoothUUID(shortValue: 0x2901)
    /// The Characteristic Presentation Format descriptor (0x2904).
    public static let presentationFormat = BluetoothUUID(shortValue: 0x2904)
}

/// A characteristic's properties by CoreBluetooth's names
/// (`CBCharacteristicProperties`), derived from BlueZ's flags.
public struct CharacteristicProperties: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt16
    /// Properties from bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `broadcast`.
    public static let broadcast = CharacteristicProperties(rawValue: 1 << 0)
    /// `read`.
    public static let read = CharacteristicProperties(rawValue: 1 << 1)
    /// `writeWithoutResponse`.
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 1 << 2)
    /// `write`.
    public static let write = CharacteristicProperties(rawValue: 1 << 3)
    /// `notify`.
    public static let notify = CharacteristicProperties(rawValue: 1 << 4)
    /// `indicate`.
    public static let indicate = CharacteristicProperties(rawValue: 1 << 5)
    /// `authenticatedSignedWrites`.
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 1 << 6)
    /// `extendedProperties`.
    public static let extendedProperties = CharacteristicProperties(rawValue: 1 << 7)
    /// `notifyEncryptionRequired`.
    public static let notifyEncryptionRequired = CharacteristicProperties(rawValue: 1 << 8)
    /// `indicateEncryptionRequired`.
    public static let indicateEncryptionRequired = CharacteristicProperties(rawValue: 1 << 9)

    /// The properties that let a characteristic notify or indicate (the
    /// encryption-required ones included: BlueZ's `encrypt-notify` gives
    /// the notify property).
    public static let notifying: CharacteristicProperties = [.notify, .indicate, .notifyEncryptionRequired, .indicateEncryptionRequired]

    /// Each property with its CoreBluetooth name and the BlueZ flags that
    /// give it, in CoreBluetooth's bit order.
    public static let names: [(property: CharacteristicProperties, name: String, flags: [String])] = [
        (.broadcast, "broadcast", ["broadcast"]),
        (.read, "read", ["read"]),
        (.writeWithoutResponse, "writeWithoutResponse", ["write-without-response"]),
        (.write, "write", ["write"]),
        (.notify, "notify", ["notify"]),
        (.indicate, "indicate", ["indicate"]),
        (.authenticatedSignedWrites, "authenticatedSignedWrites", ["authenticated-signed-writes"]),
        (.extendedProperties, "extendedProperties", ["extended-properties", "reliable-write", "writable-auxiliaries"]),
        (.notifyEncryptionRequired, "notifyEncryptionRequired", ["encrypt-notify", "encrypt-authenticated-notify", "secure-notify"]),
        (.indicateEncryptionRequired, "indicateEncryptionRequired", ["encrypt-indicate", "encrypt-authenticated-indicate", "secure-indicate"]),
    ]

    /// The properties BlueZ's `Flags` give (flags with no CoreBluetooth
    /// property, such as `encrypt-read`, add none).
    public init(bluezFlags flags: [String]) {
        var value: CharacteristicProperties = []
        for entry in Self.names where entry.flags.contains(where: flags.contains) { value.insert(entry.property) }
        self = value
    }

    /// CoreBluetooth's names of the properties set, in bit order.
    public var names: [String] { Self.names.filter { contains($0.property) }.map(\.name) }
}
