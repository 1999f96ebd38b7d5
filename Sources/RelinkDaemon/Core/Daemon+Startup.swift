import Foundation
import Logging
import RelinkStore
import Restoration
import Systemd

// Start-up: rebuild every identifier from the store and resume it, with no
// client present.
extension Daemon {
    /// Loads the store and resumes every scan, pending connection and
    /// subscription (``StartupPlan``). A link BlueZ still holds is adopted
    /// by the known-identifier strategy (Connect on a connected device
    /// succeeds at once) and reported `restored`.
    /// - Throws: ``ControlError/failed(_:)`` when the store cannot be read.
    func startUp() async throws(ControlError) {
        let stored: StoredState
        do { stored = try await store.loadState() } catch { throw .failed("cannot load the store: \(error)") }
        for row in stored.peripherals {
            let id = PeripheralID(row.id)
            peripherals[id] = row
            peripheralByAddress[row.address.address] = id
        }
        var states: [IdentifierState] = []
        for entry in stored.identifiers {
            guard let id = try? StoreMapping.coreIdentifier(entry.record.id) else {
                logger.error("stored identifier not valid for the core; skipped", metadata: ["RELINK_RESTORE_ID": "\(entry.record.id)"])
                continue
            }
            identifiers.insert(id)
            apiLoaded(id, entry)
            namePreferences[id] = entry.record.namePreference == .advertising ? .advertisingName : .gapName
            var state = IdentifierState(identifier: id, namePreference: namePreferences[id] ?? .gapName)
            if let scan = entry.scan {
                state.scan = StoreMapping.coreScan(scan)
                scanIntents[id] = state.scan
            }
            for row in entry.connections {
                do {
                    state.connections.append(try StoreMapping.coreRecord(row, peripheral: peripherals[PeripheralID(row.peripheral)]))
                } catch {
                    logger.error("stored connection intent not valid; skipped", metadata: ["RELINK_RESTORE_ID": "\(id)", "RELINK_ERROR": "\(error)"])
                }
            }
            state.subscriptions = Set(entry.subscriptions.compactMap(StoreMapping.coreSubscription))
            states.append(state)
        }
        let plan = StartupPlan(states: states, registry: &registry)
        planner.resetAll()
        for subscription in plan.subscriptions { _ = planner.subscribe(subscription) }
        for (client, scan) in plan.scans.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            await apply(scans.register(scan, for: client))
        }
        for record in plan.obsolete {
            try? await commit([.removeConnectionIntent(try StoreMapping.storeIdentifier(record.intent.identifier), peripheral: record.intent.peripheral.uuid)])
        }
        for resume in plan.resume {
            var machine = Machine(record: resume.record, clock: clock)
            let actions: [Machine.Action]
            switch resume.claim {
            case .owner: actions = machine.start(restoringConnected: resume.restoringConnected)
            case .sharing(let owner): actions = machine.claimedByOtherIntent(owner: owner)
            }
            machines[resume.record.intent] = machine
            await perform(actions, for: resume.record.intent)
            await drainImmediate()
        }
        logger.notice("restored from the store: \(statusSummary)", metadata: RelinkMessageID.restored.metadata.merging([
            "RELINK_IDENTIFIERS": "\(identifiers.count)", "RELINK_INTENTS": "\(plan.resume.count)",
            "RELINK_SUBSCRIPTIONS": "\(plan.subscriptions.count)", "RELINK_SCANS": "\(plan.scans.count)",
        ]) { $1 })
    }
}
