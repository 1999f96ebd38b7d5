import DBus
import Restoration

/// The arguments of `Adapter1.SetDiscoveryFilter`.
///
/// bluetoothd merges the filters of all its clients and forgets a client's
/// filter when the adapter is powered off or bluetoothd restarts; the
/// ``BlueZClient`` re-applies it then.
public struct DiscoveryFilter: Sendable, Hashable, Codable {
    public enum Transport: String, Sendable, Hashable, Codable {
        case auto, bredr, le
    }

    /// Service UUIDs to look for (empty: all devices).
    public var uuids: [String]
    /// Report only devices at least this strong (dBm). Not with ``pathloss``.
    public var rssi: Int16?
    /// Report only devices within this path loss (dB). Not with ``rssi``.
    public var pathloss: UInt16?
    public var transport: Transport
    /// Report every advertisement, not only changes.
    public var duplicateData: Bool
    /// Report only discoverable devices.
    public var discoverable: Bool?
    /// Prefix of the address or name.
    public var pattern: String?

    public init(uuids: [String] = [], rssi: Int16? = nil, pathloss: UInt16? = nil, transport: Transport = .le,
                duplicateData: Bool = false, discoverable: Bool? = nil, pattern: String? = nil) {
        self.uuids = uuids.map { $0.lowercased() }
        self.rssi = rssi
        self.pathloss = pathloss
        self.transport = transport
        self.duplicateData = duplicateData
        self.discoverable = discoverable
        self.pattern = pattern
    }

    /// Checks what bluetoothd would reject with `InvalidArguments`.
    /// - Throws: ``BlueZError`` of class `notSupported`.
    public func validate() throws(BlueZError) {
        if rssi != nil && pathloss != nil {
            throw BlueZError(name: "org.bluez.Error.InvalidArguments", message: "RSSI and Pathloss cannot be combined")
        }
        for u in uuids where (try? BluetoothUUID(parsing: u)) == nil {
            throw BlueZError(name: "org.bluez.Error.InvalidArguments", message: "invalid service UUID '\(u)'")
        }
    }

    /// The `a{sv}` argument of SetDiscoveryFilter.
    public var dbusValue: DBusValue {
        var entries: [DBusValue.DictionaryEntry] = [
            .init(.string("UUIDs"), .variant(.array(.string, uuids.map { .string($0) }))),
            .init(.string("Transport"), .variant(.string(transport.rawValue))),
            .init(.string("DuplicateData"), .variant(.boolean(duplicateData))),
        ]
        if let rssi { entries.append(.init(.string("RSSI"), .variant(.int16(rssi)))) }
        if let pathloss { entries.append(.init(.string("Pathloss"), .variant(.uint16(pathloss)))) }
        if let discoverable { entries.append(.init(.string("Discoverable"), .variant(.boolean(discoverable)))) }
        if let pattern { entries.append(.init(.string("Pattern"), .variant(.string(pattern)))) }
        return .dictionary(key: .string, value: .variant, entries)
    }
}
