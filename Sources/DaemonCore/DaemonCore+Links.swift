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

    /// A link is gone: its subscriptions are no longer armed, its notify
    /// sessions no longer count, the GATT grace stops waiting on it, and
    /// every intent on the peripheral is told (one that does not hold it as
    /// up ignores it); nothing for an address no known peripheral is at. The failure is `LinkLost`, transient, with
    /// bluetoothd's cause in its message where there is one.
    mutating func linkLost(_ peripheral: PeripheralID?, _ address: BluetoothAddress, why: String, cause: LinkEndCause?) -> [Effect] {
        guard let peripheral else { return [] }
        let notified = planner.linkDown(peripheral)
        gattGrace.stopWaiting(for: peripheral)
        let reason = Self.linkLostFailure(why, cause: cause)
        return stopped(peripheral, notified, reason)
            + [.endNotifySessionsOf(peripheral), .feedEach(intents(of: peripheral), .disconnected(address, reason: reason, cause: cause))]
    }

    /// Why a link went down, as relinkd tells it (an intent's
    /// `disconnected`, a `peer-disconnected`): `LinkLost`, transient, with
    /// bluetoothd's cause in the message where it gave one.
    static func linkLostFailure(_ why: String, cause: LinkEndCause?) -> ConnectionFailure {
        ConnectionFailure(.transient, errorName: RelinkErrorName.linkLost.rawValue,
                          message: cause.map { "\(why) (bluetoothd: \($0.rawValue))" } ?? why)
    }

    /// A link still `Connected` whose services did not come back within
    /// the grace is lost: journalled, every intent told as for any lost
    /// link, and the device disconnected. Nothing when it went down or
    /// resolved its services meanwhile.
    mutating func halfOpenLooked(_ peripheral: PeripheralID?, _ address: BluetoothAddress, stillHalfOpen: Bool) -> [Effect] {
        guard stillHalfOpen else { return [] }
        return [.halfOpenLinkLost(address)]
            + linkLost(peripheral, address, why: "services no longer resolved on a link BlueZ still reports up", cause: nil)
            + [.disconnectHalfOpen(address)]
    }

    /// bluetoothd removed the peripheral's device object: its API object
    /// shows no device, and its link, if any, is lost like any link. Not a
    /// removed bond by itself (a bluetoothd restart removes every object
    /// and adds the bonded ones again, paired): the bond watch judges the
    /// object that comes back.
    mutating func deviceObjectRemoved(_ peripheral: PeripheralID, _ address: BluetoothAddress) -> [Effect] {
        [.deviceObjectGone(peripheral)] + linkLost(peripheral, address, why: "bluetoothd removed the device object", cause: nil)
    }

    /// An advertisement, to each scan that wants it (once per peripheral and
    /// payload unless it allows duplicates, ``ScanCoordinator``), in the
    /// coordinator's order: a connection looking for its device is fed it,
    /// an identifier's own scan is told of a discovery.
    mutating func advertised(_ advertisement: Advertisement) -> [Effect] {
        scans.deliver(advertisement).map { client in
            switch client {
            case .connection(let intent): .feedEach([intent], .advertisement(advertisement))
            case .identifier(let id): .discovered(advertisement, by: id)
            }
        }
    }
}
