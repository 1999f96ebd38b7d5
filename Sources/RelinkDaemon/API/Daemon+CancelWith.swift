import DBus
import Logging
import RelinkAPI
import RelinkModel

// `Central1.CancelWith` (issue 24, item 1: "removing an identifier's last
// use of a bond can remove the bond if the client asked for it";
// docs/api/Central1.md): `Cancel`, then, with `remove_bond`, the bond
// goes too (as `Unpair`) when no other identifier still uses the
// peripheral; when one does, the bond stays and the reply and the journal
// say why.
extension Daemon {
    /// What became of the bond after a `CancelWith`.
    struct BondOutcome: Sendable, Equatable {
        /// Whether relinkd removed bluetoothd's bond (`Adapter1.RemoveDevice`).
        var removed: Bool
        /// Why it was not removed ("" when it was, or when nobody asked).
        var reason: String
    }

    /// `CancelWith(peripheral, {remove_bond})`: ends the intent and its
    /// subscriptions as `Cancel` does; then, if `removeBond`, removes the
    /// bond when no identifier uses the peripheral any more, else keeps it
    /// and says why (journal `bond-kept`).
    /// - Throws: as `Cancel`, and `NotReady`, `Failed` from removing the bond.
    nonisolated func cancelWith(_ id: RestoreIdentifier, _ ref: PeripheralRef, removeBond: Bool,
                                from caller: APICaller) async throws(RelinkError) -> BondOutcome {
        _ = try await submit(.cancel(id, ref), from: caller).get()
        guard removeBond else { return BondOutcome(removed: false, reason: "") }
        let values: [DBusValue]
        do {
            values = try await submit(.unpairTarget(id, ref), from: caller).get().values
        } catch where error.code == .notPermitted {
            return kept(id, ref, "another identifier still uses \(ref): the bond stays for it")
        }
        guard case .objectPath(let device)? = values.first else {
            return kept(id, ref, "bluetoothd has no device for \(ref): no bond to remove")
        }
        var peripheral = "\(ref)"
        if case .string(let uuid)? = values.dropFirst().first { peripheral = uuid }
        guard case .boolean(true)? = values.dropFirst(2).first else {
            return kept(id, ref, "\(ref) is not paired: no bond to remove")
        }
        try await self.removeBond(id, device, peripheral: peripheral, why: "CancelWith")
        return BondOutcome(removed: true, reason: "")
    }

    /// A bond `CancelWith` was asked to remove and did not: journalled.
    private nonisolated func kept(_ id: RestoreIdentifier, _ ref: PeripheralRef, _ reason: String) -> BondOutcome {
        env.logger.notice("bond kept: \(reason)", metadata: .journal([
            .event: "bond-kept", .restoreID: "\(id)", .peripheral: "\(ref)", .decision: "CancelWith", .errorMessage: "\(reason)",
        ]))
        return BondOutcome(removed: false, reason: reason)
    }
}
