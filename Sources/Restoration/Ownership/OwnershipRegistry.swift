public import RelinkModel
/// Who owns each peripheral's link among relink's connection intents, so two
/// intents never fight over one device (two Connects, or one cancelling the
/// other's attempt).
///
/// The first intent to claim a peripheral owns it and runs the strategies;
/// later ones share: they issue no Connect and get the owner's link (see
/// ``ConnectionStateMachine/claimedByOtherIntent(owner:ownerLink:restoringConnected:)``;
/// the owner's `tellSharers` action reaches them through ``sharers(of:)``). When the owner
/// releases, the earliest remaining claimant becomes owner
/// (``ConnectionStateMachine/ownershipGranted()``).
public struct OwnershipRegistry: Sendable {
    public enum Claim: Sendable, Hashable {
        /// The intent owns the peripheral (newly, or already did).
        case owner
        /// Another intent owns it: share its link.
        case sharing(owner: ConnectionIntentID)
    }

    /// Claimants per peripheral, owner first.
    private var claimants: [PeripheralID: [ConnectionIntentID]] = [:]

    public init() {}

    /// Claims the intent's peripheral. Idempotent.
    public mutating func claim(_ intent: ConnectionIntentID) -> Claim {
        var list = claimants[intent.peripheral] ?? []
        if !list.contains(intent) { list.append(intent) }
        claimants[intent.peripheral] = list
        return list[0] == intent ? .owner : .sharing(owner: list[0])
    }

    /// Releases the intent's claim. Returns the new owner when ownership
    /// passed to another intent, else nil.
    public mutating func release(_ intent: ConnectionIntentID) -> ConnectionIntentID? {
        guard var list = claimants[intent.peripheral], let index = list.firstIndex(of: intent) else { return nil }
        list.remove(at: index)
        claimants[intent.peripheral] = list.isEmpty ? nil : list
        return index == 0 ? list.first : nil
    }

    public func owner(of peripheral: PeripheralID) -> ConnectionIntentID? { claimants[peripheral]?.first }

    /// Intents sharing the owner's link.
    public func sharers(of peripheral: PeripheralID) -> [ConnectionIntentID] { Array((claimants[peripheral] ?? []).dropFirst()) }

    /// Whether intents other than `intent` claim its peripheral (pass to
    /// ``ConnectionStateMachine/cancel(linkSharedWithOthers:)``).
    public func isShared(beyond intent: ConnectionIntentID) -> Bool {
        (claimants[intent.peripheral] ?? []).contains { $0 != intent }
    }
}
