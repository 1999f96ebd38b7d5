/// A characteristic of a peripheral, by service and characteristic UUID.
/// (Two characteristics with the same UUIDs in one service are not told apart.)
public struct CharacteristicKey: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var service: BluetoothUUID
    public var characteristic: BluetoothUUID

    public init(service: BluetoothUUID, characteristic: BluetoothUUID) {
        self.service = service
        self.characteristic = characteristic
    }

    public var description: String { "\(service)/\(characteristic)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.service, lhs.characteristic) < (rhs.service, rhs.characteristic)
    }
}

/// A restore identifier's wish to get notifications (or indications) of one
/// characteristic of one peripheral (`setNotifyValue:true`).
public struct Subscription: Sendable, Hashable, Codable {
    public var identifier: RestoreIdentifier
    public var peripheral: PeripheralID
    public var characteristic: CharacteristicKey

    public init(identifier: RestoreIdentifier, peripheral: PeripheralID, characteristic: CharacteristicKey) {
        self.identifier = identifier
        self.peripheral = peripheral
        self.characteristic = characteristic
    }
}
