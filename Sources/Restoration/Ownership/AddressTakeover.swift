public import RelinkModel

/// Whether an intent's peripheral may take an address at which its device
/// was found again (an address that changed: the match rule found it), when
/// another peripheral row may hold that address.
///
/// * Nobody else holds it: take it.
/// * A peripheral that only a scan met (no intent, no subscription) holds
///   it: that one gives it up and is retired (its row removed, its viewers
///   told); the intent's peripheral takes the address.
/// * A peripheral that something wants holds it: two identities for one
///   device; the intent's stored address is kept as it was, and the daemon
///   journals the conflict.
public enum AddressTakeover: Sendable, Hashable {
    /// Take the address.
    case take
    /// Take the address and retire the peripheral that held it.
    case takeRetiring(PeripheralID)
    /// Keep the stored address: `holder` is wanted.
    case keep(holder: PeripheralID)

    /// The decision for `claimant` taking an address `holder` may hold.
    public static func decide(claimant: PeripheralID, holder: PeripheralID?, holderIsWanted: Bool) -> AddressTakeover {
        guard let holder, holder != claimant else { return .take }
        return holderIsWanted ? .keep(holder: holder) : .takeRetiring(holder)
    }
}
