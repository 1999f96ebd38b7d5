/// A descriptor of a peripheral, by its service's, characteristic's and
/// own UUID. (Two descriptors with the same UUIDs are not told apart.)
public struct DescriptorKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The characteristic it belongs to.
    public var characteristic: CharacteristicKey
    /// The descriptor's UUID.
    public var descriptor: BluetoothUUID

    /// A descriptor by its three UUIDs.
    public init(characteristic: CharacteristicKey, descriptor: BluetoothUUID) {
        self.characteristic = characteristic
        self.descriptor = descriptor
    }

    /// Whether it is the Client Characteristic Configuration descriptor
    /// (0x2902), which relinkd's subscriptions own.
    public var isClientCharacteristicConfiguration: Bool { descriptor == GattDatabase.clientCharacteristicConfiguration }

    /// `service/characteristic/descriptor`.
    public var description: String { "\(characteristic)/\(descriptor)" }

    /// By characteristic, then descriptor.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.characteristic, lhs.descriptor) < (rhs.characteristic, rhs.descriptor)
    }
}
