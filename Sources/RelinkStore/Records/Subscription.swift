import Foundation

/// A characteristic a restore identifier subscribed to (notify or indicate).
public struct Subscription: Hashable, Comparable, Sendable, Codable {
    public var identifier: RestoreIdentifier
    public var peripheral: UUID
    public var service: BluetoothUUID
    public var characteristic: BluetoothUUID
    public var createdAt: Date

    public init(identifier: RestoreIdentifier, peripheral: UUID, service: BluetoothUUID, characteristic: BluetoothUUID, createdAt: Date) {
        self.identifier = identifier
        self.peripheral = peripheral
        self.service = service
        self.characteristic = characteristic
        self.createdAt = createdAt.roundedToStoredPrecision
    }

    /// Ordered as stored: identifier, peripheral, service, characteristic.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.identifier.rawValue, lhs.peripheral.storedText, lhs.service.canonical, lhs.characteristic.canonical)
            < (rhs.identifier.rawValue, rhs.peripheral.storedText, rhs.service.canonical, rhs.characteristic.canonical)
    }
}
