import DaemonCore
import Logging
import RelinkModel
import Restoration

// Carrying out what the ``DaemonCore`` decided, effect by effect, in order.
extension Daemon {
    /// Carries out `effects` now, awaiting each.
    func perform(_ effects: [DaemonCore<DaemonClock>.Effect]) async {
        for effect in effects {
            switch effect {
            case .machineActions(let intent, let actions): await perform(actions, for: intent)
            default: queue([effect])
            }
        }
    }

    /// Carries out `effects` that need no waiting; a machine's actions are
    /// left for the loop's queue of immediate inputs, as any machine input
    /// decided while another input is being handled.
    func queue(_ effects: [DaemonCore<DaemonClock>.Effect]) {
        for effect in effects {
            switch effect {
            case .machineActions(let intent, let actions):
                // Only ``perform(_:)`` carries out actions, and no input
                // handed to this path yields them (linkCarried, the adapter's
                // status): a core that did would change the loop's order.
                // Tests stop here; relinkd says so in the journal.
                assertionFailure("machine actions for \(intent) decided outside an input's turn")
                logger.critical("machine actions decided outside an input's turn were dropped", metadata: .journal([
                    .restoreID: "\(intent.identifier)", .peripheral: "\(intent.peripheral)", .error: "\(actions.count) action(s)",
                ]))
            case .machineInputAfter(let intent, let input): loop.immediate.append((intent, input))
            case .announceAdapter(let announcement, let identifiers): announce(announcement, to: identifiers)
            case .adapterAsAnnounced(let status):
                logger.info("adapter \(adapterName) is \(status), as last announced", metadata: .journal([
                    .adapter: "\(adapterName)", .adapterState: "\(status.state.rawValue)", .adapterRoles: "\(Self.rolesText(status))",
                ]))
            }
        }
    }
}
