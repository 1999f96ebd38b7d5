public import RelinkModel
public import Restoration

// Whether each subscription's notifications flow on its link, as programs are
// told in `notification-state` events (CoreBluetooth's
// `peripheral(_:didUpdateNotificationStateFor:error:)`): notifying once
// bluetoothd confirmed the StartNotify on the link, not notifying when the
// link, bluetoothd, the adapter's power, the characteristic or the
// subscription ends, or the peripheral refuses it. The planner keeps the
// state; this decides whom to tell and why.
extension DaemonCore {
    /// A subscribed characteristic started or stopped notifying on its link:
    /// the identifiers to tell, and why it stopped.
    public struct NotificationChange: Sendable, Hashable {
        /// The peripheral whose link it is.
        public var peripheral: PeripheralID
        /// The characteristic.
        public var characteristic: CharacteristicKey
        /// Whether it notifies now.
        public var notifying: Bool
        /// Why it stopped; nil when it started, or when the identifier unsubscribed.
        public var reason: ConnectionFailure?
        /// Who is told, sorted.
        public var identifiers: [RestoreIdentifier]

        /// A change to tell.
        public init(peripheral: PeripheralID, characteristic: CharacteristicKey, notifying: Bool, reason: ConnectionFailure?,
                    identifiers: [RestoreIdentifier]) {
            self.peripheral = peripheral
            self.characteristic = characteristic
            self.notifying = notifying
            self.reason = reason
            self.identifiers = identifiers
        }

        /// The event each identifier is told.
        public var event: RelinkEvent {
            .notificationState(peripheral: peripheral, characteristic: characteristic, notifying: notifying, reason: reason)
        }
    }

    /// Why notifications stopped when bluetoothd left the bus or stopped answering.
    static var bluetoothdGone: ConnectionFailure {
        ConnectionFailure(.transient, errorName: RelinkErrorName.bluetoothdRestarted.rawValue,
                          message: "bluetoothd left the bus or stopped answering")
    }

    /// Why notifications stopped when the armed characteristic's object left the link.
    static func characteristicGone(_ key: CharacteristicKey) -> ConnectionFailure {
        ConnectionFailure(.transient, errorName: RelinkErrorName.unknownCharacteristic.rawValue,
                          message: "characteristic \(key) left the link (the peripheral's GATT database changed); armed again when it is back")
    }

    /// The effect that tells `changes`, none when nobody is to be told.
    static func told(_ changes: [NotificationChange]) -> [Effect] {
        let changes = changes.filter { !$0.identifiers.isEmpty }
        return changes.isEmpty ? [] : [.notificationStates(changes)]
    }

    /// `keys` stopped notifying on the peripheral's link for `reason`:
    /// every subscriber of each is told.
    func stopped(_ peripheral: PeripheralID, _ keys: [CharacteristicKey], _ reason: ConnectionFailure) -> [Effect] {
        Self.told(keys.map {
            NotificationChange(peripheral: peripheral, characteristic: $0, notifying: false, reason: reason,
                               identifiers: planner.route(peripheral, characteristic: $0))
        })
    }

    /// Every link's notifications ended at once (bluetoothd, the adapter's power).
    func stopped(_ ended: [PeripheralID: [CharacteristicKey]], _ reason: ConnectionFailure) -> [Effect] {
        ended.keys.sorted().flatMap { stopped($0, ended[$0] ?? [], reason) }
    }

    /// A stored subscription was added: armed when the link is up and it
    /// is not yet; the identifier is told at once when the characteristic
    /// already notifies on the link (another identifier's subscription).
    mutating func subscribed(_ subscription: Subscription) -> [Effect] {
        let commands = planner.subscribe(subscription)
        var effects: [Effect] = commands.isEmpty ? [] : [.subscriptionCommands(commands)]
        if planner.isNotifying(subscription.peripheral, subscription.characteristic) {
            effects += Self.told([NotificationChange(peripheral: subscription.peripheral, characteristic: subscription.characteristic,
                                                     notifying: true, reason: nil, identifiers: [subscription.identifier])])
        }
        return effects
    }

    /// A subscription's row was removed: the identifier is told its
    /// notifications stopped (no reason: it asked) when they flowed, the
    /// link stops them when it was the last subscriber, and the GATT grace
    /// forgets a characteristic nobody wants.
    mutating func unsubscribed(_ subscription: Subscription) -> [Effect] {
        let peripheral = subscription.peripheral, key = subscription.characteristic
        let wasNotifying = planner.contains(subscription) && planner.isNotifying(peripheral, key)
        let commands = planner.unsubscribe(subscription)
        if planner.route(peripheral, characteristic: key).isEmpty { gattGrace.forget(peripheral, key) }
        var effects: [Effect] = []
        if wasNotifying {
            effects += Self.told([NotificationChange(peripheral: peripheral, characteristic: key, notifying: false, reason: nil,
                                                     identifiers: [subscription.identifier])])
        }
        if !commands.isEmpty { effects.append(.subscriptionCommands(commands)) }
        return effects
    }

    /// A StartNotify failed on the link: armed again at the next link.
    /// When the peripheral or bluetoothd refused it (``isRefusal(_:)``),
    /// every subscriber is told why, once per link; a failure because the
    /// link or bluetoothd went away is told by their own end instead.
    mutating func notifyFailed(_ peripheral: PeripheralID, _ key: CharacteristicKey, _ failure: ConnectionFailure) -> [Effect] {
        guard Self.isRefusal(failure) else {
            planner.startNotifyFailed(peripheral, key)
            return []
        }
        return Self.told([NotificationChange(peripheral: peripheral, characteristic: key, notifying: false, reason: failure,
                                             identifiers: planner.notifyRefused(peripheral, key))])
    }

    /// Whether a StartNotify's failure is a refusal of the subscription
    /// itself (the characteristic cannot notify, permission, or an ATT
    /// error from the peripheral writing its CCC descriptor) rather than
    /// the link or bluetoothd going away or a timeout.
    static func isRefusal(_ failure: ConnectionFailure) -> Bool {
        if failure.failureClass.isPermanent || failure.failureClass == .unknown { return true }
        return failure.errorName == "org.bluez.Error.Failed" && failure.message.lowercased().contains("att error")
    }
}
