import RelinkModel
import RelinkStore
import Restoration

// What relinkd keeps, per intent, of its peripheral's bond (store v11):
// bonded or not, and whether the stored address is the identity bluetoothd
// resolved a resolvable private address to. Shown in `Status`.
extension Daemon {
    /// Changes the bond state of every intent on `peripheral` and stores
    /// the intents whose state changed (their machine's current record).
    func noteBond(of peripheral: PeripheralID, _ change: (inout IntentBond) -> Void) async {
        var mutations: [StoreMutation] = []
        for intent in intents(of: peripheral) {
            var bond = known.intentBonds[intent] ?? IntentBond()
            let before = bond
            change(&bond)
            guard bond != before, let record = core.machines[intent]?.currentRecord else { continue }
            known.intentBonds[intent] = bond
            do { mutations.append(.putConnectionIntent(try StoreMapping.storeIntent(record, bond: bond))) } catch {
                logger.error("cannot store the intent's bond", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
            }
        }
        guard !mutations.isEmpty else { return }
        do { try await commit(mutations) } catch {
            logger.error("cannot store the intents' bond", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
        }
    }
}
