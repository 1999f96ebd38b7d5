public import DBus
public import RelinkModel

// `Adapter1.SetDiscoveryFilter`'s argument for the model's filter.
//
// bluetoothd merges the filters of all its clients and forgets a client's
// filter when the adapter is powered off or bluetoothd restarts; the
// ``BlueZClient`` re-applies it then.
extension DiscoveryFilter {
    /// Checks what bluetoothd would reject with `InvalidArguments`.
    /// - Throws: ``BlueZError`` of class `notSupported`.
    public func validate() throws(BlueZError) {
        if minimumRSSI != nil && pathloss != nil {
            throw BlueZError(name: "org.bluez.Error.InvalidArguments", message: "RSSI and Pathloss cannot be combined")
        }
    }

    /// The `a{sv}` argument of SetDiscoveryFilter.
    public var dbusValue: DBusValue {
        var entries: [DBusValue.DictionaryEntry] = [
            .init(.string("UUIDs"), .variant(.array(.string, services.sorted().map { .string($0.string) }))),
            .init(.string("Transport"), .variant(.string(transport.rawValue))),
            .init(.string("DuplicateData"), .variant(.boolean(duplicateData))),
        ]
        if let minimumRSSI { entries.append(.init(.string("RSSI"), .variant(.int16(minimumRSSI)))) }
        if let pathloss { entries.append(.init(.string("Pathloss"), .variant(.uint16(pathloss)))) }
        if let discoverable { entries.append(.init(.string("Discoverable"), .variant(.boolean(discoverable)))) }
        if let pattern { entries.append(.init(.string("Pattern"), .variant(.string(pattern)))) }
        return .dictionary(key: .string, value: .variant, entries)
    }
}
