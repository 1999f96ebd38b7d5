import DBus
public import RelinkModel
import RelinkAPI

extension RelinkManager {
    /// `Central1.GattDatabase`: the live GATT database of a peripheral the
    /// identifier has a connection intent on.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`
    ///   (no intent on it), `NotConnected`, `ServicesNotResolved`, `Failed`; unreachable.
    public func gattDatabase(_ identifier: String, peripheral: String) async throws(RelinkClientError) -> GattDatabase {
        let reply = try await central(identifier, Central1Member.gattDatabase.rawValue, [.string(try RelinkArguments.peripheral(peripheral))])
        let json = try decode(reply, "GattDatabase", String.self)
        do { return try GattDatabase(json: json) } catch { throw .badReply("GattDatabase", "\(error)") }
    }

    /// `Central1.ReadDescriptor`.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `UnknownCharacteristic`, `UnknownDescriptor`, `NotConnected`, `NotPermitted`, `NotSupported`, `Failed`; unreachable.
    public func readDescriptor(_ identifier: String, peripheral: String, service: String, characteristic: String,
                               descriptor: String) async throws(RelinkClientError) -> [UInt8] {
        let reply = try await central(identifier, Central1Member.readDescriptor.rawValue,
                                      try gattArguments(peripheral, service, characteristic) + [.string(try RelinkArguments.bluetoothUUID(descriptor))])
        return try decode(reply, "ReadDescriptor", [UInt8].self)
    }

    /// `Central1.WriteDescriptor` (at most 512 bytes; never the CCCD 0x2902, which subscriptions own).
    /// - Throws: ``RelinkClientError``: as ``readDescriptor(_:peripheral:service:characteristic:descriptor:)``;
    ///   `NotPermitted` for the CCCD.
    public func writeDescriptor(_ identifier: String, peripheral: String, service: String, characteristic: String,
                                descriptor: String, value: [UInt8]) async throws(RelinkClientError) {
        try RelinkArguments.checkValue(value)
        _ = try await central(identifier, Central1Member.writeDescriptor.rawValue,
                              try gattArguments(peripheral, service, characteristic)
                                  + [.string(try RelinkArguments.bluetoothUUID(descriptor)), .array(.byte, value.map(DBusValue.byte))])
    }
}

extension RelinkCentral {
    /// The peripheral's services, included services, characteristics (with
    /// CoreBluetooth's properties) and descriptors, as bluetoothd has them
    /// now (CoreBluetooth's `discoverServices`, `discoverIncludedServices`,
    /// `discoverCharacteristics`, `discoverDescriptors` at once). Ask after
    /// its `connected` event; the database read before a restart is in
    /// ``RelinkRestoredState/Peripheral/gattDatabase``.
    /// - Throws: ``RelinkClientError``: `UnknownPeripheral` (no connection intent on it),
    ///   `NotConnected`, `ServicesNotResolved`, `UnknownIdentifier`, `InvalidArguments`, `Failed`; unreachable.
    public func gattDatabase(peripheral: String) async throws(RelinkClientError) -> GattDatabase {
        try await connected().gattDatabase(restoreIdentifier, peripheral: peripheral)
    }

    /// Reads a descriptor over the live link (CoreBluetooth's `readValue(for: CBDescriptor)`).
    /// - Throws: ``RelinkClientError``: `UnknownCharacteristic` (its service or characteristic
    ///   is not on the link), `UnknownDescriptor`, `NotConnected`, `NotPermitted`, `InvalidArguments`, `Failed`; unreachable.
    public func readDescriptor(peripheral: String, service: String, characteristic: String, descriptor: String) async throws(RelinkClientError) -> [UInt8] {
        try await connected().readDescriptor(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic, descriptor: descriptor)
    }

    /// Writes a descriptor over the live link (at most 512 bytes). The
    /// CCCD (0x2902) is refused with `NotPermitted`: use ``subscribe(peripheral:service:characteristic:)``.
    /// - Throws: ``RelinkClientError``: as ``readDescriptor(peripheral:service:characteristic:descriptor:)``.
    public func writeDescriptor(peripheral: String, service: String, characteristic: String, descriptor: String,
                                value: [UInt8]) async throws(RelinkClientError) {
        try await connected().writeDescriptor(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic,
                                            descriptor: descriptor, value: value)
    }
}
