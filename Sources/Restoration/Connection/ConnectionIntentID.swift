public import RelinkModel
/// One connection intent: a restore identifier wanting one peripheral. Like
/// CoreBluetooth, an identifier has at most one intent per peripheral
/// (connecting twice is the same request).
public struct ConnectionIntentID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var identifier: RestoreIdentifier
    public var peripheral: PeripheralID

    public init(identifier: RestoreIdentifier, peripheral: PeripheralID) {
        self.identifier = identifier
        self.peripheral = peripheral
    }

    public var description: String { "\(identifier)/\(peripheral)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.identifier, lhs.peripheral) < (rhs.identifier, rhs.peripheral)
    }
}
