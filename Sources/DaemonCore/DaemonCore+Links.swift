public import RelinkModel
public import Restoration

// Connection machines and their links: feeding a machine, and what a link
// that carried data means for every intent on its peripheral.
extension DaemonCore {
    /// The machines of intents for `peripheral`, in intent order.
    public func intents(of peripheral: PeripheralID) -> [ConnectionIntentID] {
        machines.keys.filter { $0.peripheral == peripheral }.sorted()
    }

    /// The identifiers with an intent or a subscription on `peripheral`, sorted.
    public func interestedIdentifiers(in peripheral: PeripheralID) -> [RestoreIdentifier] {
        Set(machines.keys.filter { $0.peripheral == peripheral }.map(\.identifier))
            .union(planner.identifiers(subscribedOn: peripheral)).sorted()
    }

    /// A machine's input: its actions, nothing for an intent that is gone.
    /// A link whose services resolved is a new link: it has carried nothing yet.
    mutating func feed(_ intent: ConnectionIntentID, _ input: Machine.Input) -> [Effect] {
        guard var machine = machines[intent] else { return [] }
        if case .servicesResolved = input { linksCarried.remove(intent.peripheral) }
        let actions = machine.handle(input)
        machines[intent] = machine
        return [.machineActions(intent, actions)]
    }

    /// The peripheral's link carried data: each of its intents hears it once
    /// per link, so that a short link that worked is not taken for one that
    /// fails at once (``ConnectionStateMachine/linkCarried()``). Nothing
    /// after the first time on the same link (constant time on the value path).
    mutating func linkCarried(_ peripheral: PeripheralID) -> [Effect] {
        guard linksCarried.insert(peripheral).inserted else { return [] }
        return intents(of: peripheral).map { .machineInputAfter($0, .linkCarried) }
    }
}
