/// A restore identifier's wish to get notifications (or indications) of one
/// characteristic of one peripheral (`setNotifyValue:true`).
public struct Subscription: Sendable, Hashable, Codable, Comparable {
    /// Whose subscription it is.
    public var identifier: RestoreIdentifier
    /// The peripheral it is on.
    public var peripheral: PeripheralID
    /// The characteristic, by service and characteristic UUID.
    public var characteristic: CharacteristicKey

    /// A subscription of `identifier` to `characteristic` of `peripheral`.
    public init(identifier: RestoreIdentifier, peripheral: PeripheralID, characteristic: CharacteristicKey) {
        self.identifier = identifier
        self.peripheral = peripheral
        self.characteristic = characteristic
    }

    /// Ordered by identifier, peripheral, service, characteristic (as the store keeps them).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.identifier, lhs.peripheral, lhs.characteristic) < (rhs.identifier, rhs.peripheral, rhs.characteristic)
    }
}
