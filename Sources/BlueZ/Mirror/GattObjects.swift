public import DBus

/// A snapshot of an `org.bluez.GattService1` object.
public struct GattService: Sendable, Hashable {
    public var path: ObjectPath
    public var device: ObjectPath?
    public var uuid: String
    public var primary: Bool
    /// The service objects it includes (`Includes`; empty when bluetoothd omits it).
    public var includes: [ObjectPath]

    init(path: ObjectPath, properties p: InterfaceProperties) {
        self.path = path
        device = p.path("Device")
        uuid = (p.string("UUID") ?? "").lowercased()
        primary = p.bool("Primary") ?? true
        includes = p.paths("Includes")
    }
}

/// A snapshot of an `org.bluez.GattCharacteristic1` object.
public struct GattCharacteristic: Sendable, Hashable {
    public var path: ObjectPath
    public var service: ObjectPath?
    public var uuid: String
    public var flags: [String]
    public var value: [UInt8]?
    public var notifying: Bool
    /// The link's ATT MTU as bluetoothd reports it on the characteristic
    /// (`MTU`, BlueZ 5.62 and later); nil when it does not.
    public var mtu: Int?
    /// Whether bluetoothd offers `AcquireWrite` here (the `WriteAcquired`
    /// property is present: only for `write-without-response`).
    public var offersAcquireWrite: Bool

    init(path: ObjectPath, properties p: InterfaceProperties) {
        self.path = path
        service = p.path("Service")
        uuid = (p.string("UUID") ?? "").lowercased()
        flags = p.strings("Flags")
        value = p.bytes("Value")
        notifying = p.bool("Notifying") ?? false
        mtu = p.uint16("MTU").map(Int.init)
        offersAcquireWrite = p.bool("WriteAcquired") != nil
    }

    public var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    /// Whether it takes writes without response (ATT Write Command).
    public var canWriteWithoutResponse: Bool { flags.contains("write-without-response") }
}

/// A snapshot of an `org.bluez.GattDescriptor1` object.
public struct GattDescriptor: Sendable, Hashable {
    public var path: ObjectPath
    public var characteristic: ObjectPath?
    public var uuid: String
    /// BlueZ's `Flags` (`read`, `write`, ...).
    public var flags: [String]

    init(path: ObjectPath, properties p: InterfaceProperties) {
        self.path = path
        characteristic = p.path("Characteristic")
        uuid = (p.string("UUID") ?? "").lowercased()
        flags = p.strings("Flags")
    }
}
