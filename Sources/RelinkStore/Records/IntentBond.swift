/// What relinkd keeps of a connection intent's bond (store v11; issue 24):
/// whether bluetoothd bonded its peripheral, and whether the stored address
/// is the identity address bluetoothd resolved the peripheral's resolvable
/// private address to when it paired (so a peripheral that rotates its
/// address is found again through it, without the match rule).
public struct IntentBond: Hashable, Sendable, Codable {
    /// bluetoothd bonded the peripheral (`Paired`/`Bonded`) while the intent was there.
    public var bonded: Bool
    /// The intent's stored address is the peripheral's identity address.
    public var identityAddress: Bool

    /// A bond state; neither by default (an intent never bonded).
    public init(bonded: Bool = false, identityAddress: Bool = false) {
        self.bonded = bonded
        self.identityAddress = identityAddress
    }
}
