import RelinkAPI
import RelinkModel

// Who may name a peripheral in `Pair`, `PairWith` and `Unpair` (issue 24
// item 4; docs/api/access.md, "Pairing"). bluetoothd keeps one bond per
// device for every program on the gateway, so a pairing call reaches
// beyond the caller's identifier: a user may pair and unpair only a
// peripheral one of their own identifiers uses or used since relinkd
// started (a connection intent or a subscription), or discovered; root
// any. For anyone else the peripheral looks exactly like one relinkd does
// not know, so that another user's peripheral can neither be unpaired
// (its bond removed under the other user's program once that program's
// intent is gone) nor be told to exist.
extension Daemon {
    /// Throws the reply for an unknown peripheral unless `caller` may name
    /// `ref` in a pairing call.
    /// - Throws: `UnknownPeripheral`.
    func checkPairingAccess(_ ref: PeripheralRef, for caller: APICaller) throws(RelinkError) {
        guard mayName(try knownPeripheral(ref), caller) else { throw Self.unknownPeripheral(ref) }
    }
}
