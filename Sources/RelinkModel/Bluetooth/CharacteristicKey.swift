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
