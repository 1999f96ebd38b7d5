public import RelinkModel
public import Restoration

// A link that is up while a subscribed characteristic is not among its GATT
// objects: wait for it (``GattGrace``), arm it when it appears, and after a
// look decide by what the link shows: fail the subscription, reconnect so
// that bluetoothd discovers services afresh, or go on waiting.
extension DaemonCore {
    /// What a link shows of its GATT database, as the daemon read it from
    /// bluetoothd's objects for ``Input/gattLooked(_:_:)``.
    public struct LinkGatt: Sendable, Hashable {
        /// Whether the device is connected.
        public var connected: Bool
        /// Whether bluetoothd says its services are resolved.
        public var servicesResolved: Bool
        /// For each service UUID on the link, the UUIDs of the
        /// characteristics of the services with that UUID.
        public var characteristics: [BluetoothUUID: Set<BluetoothUUID>]

        /// A link's GATT objects as read.
        public init(connected: Bool, servicesResolved: Bool, characteristics: [BluetoothUUID: Set<BluetoothUUID>]) {
            self.connected = connected
            self.servicesResolved = servicesResolved
            self.characteristics = characteristics
        }

        /// What the link shows of `key` when it has no object for it; nil
        /// when the characteristic is there.
        public func absence(of key: CharacteristicKey) -> GattGrace.Absence? {
            let seen = characteristics[key.service] ?? []
            if seen.contains(key.characteristic) { return nil }
            return GattGrace.absence(servicesResolved: servicesResolved, characteristicsOfService: seen)
        }
    }

    /// A subscription removed because the peripheral cannot serve it.
    public struct FailedSubscription: Sendable, Hashable {
        /// The subscription removed.
        public var subscription: Subscription
        /// Why, as its identifier is told in a `subscription-failed` event.
        public var reason: ConnectionFailure
        /// What the link is asked once it is removed (a `StopNotify` when it was the last one armed).
        public var stop: [SubscriptionPlanner.Command]

        /// A failed subscription.
        public init(subscription: Subscription, reason: ConnectionFailure, stop: [SubscriptionPlanner.Command]) {
            self.subscription = subscription
            self.reason = reason
            self.stop = stop
        }
    }

    /// StartNotify found no object for `key` on the link: armed again at the
    /// next link-up or when it appears; a wait begins (unless one runs), and
    /// the operator hears of it once until it is armed.
    mutating func characteristicMissing(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> [Effect] {
        planner.startNotifyFailed(peripheral, key)
        var effects = awaitGatt(peripheral)
        if gattGrace.reportMissing(peripheral, key) { effects.append(.characteristicNotYetOnLink(peripheral, key)) }
        return effects
    }

    /// The object of an armed `key` left the link (the peripheral's GATT
    /// database changed on a live link): armed again when it is back.
    /// Its subscribers are told it stopped notifying, when it did.
    mutating func characteristicLeft(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> [Effect] {
        let wasNotifying = planner.startNotifyFailed(peripheral, key)
        return [.characteristicLeftLink(peripheral, key)] + (wasNotifying ? stopped(peripheral, [key], Self.characteristicGone(key)) : [])
            + awaitGatt(peripheral)
    }

    /// Characteristics appeared on the peripheral's connected link: when it
    /// was awaited, everything wanted and not armed is armed now.
    mutating func characteristicsAppeared(_ peripheral: PeripheralID) -> [Effect] {
        guard gattGrace.appeared(on: peripheral) else { return [] }
        return [.subscriptionCommands(planner.linkUp(peripheral))]
    }

    /// Notifications were armed for `key`: confirmed, its subscribers told
    /// it notifies (once per link), its reconnections start over, and the
    /// link carried something.
    mutating func notifyArmed(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> [Effect] {
        gattGrace.armed(peripheral, key)
        let told = Self.told([NotificationChange(peripheral: peripheral, characteristic: key, notifying: true, reason: nil,
                                                 identifiers: planner.confirmArmed(peripheral, key))])
        return told + linkCarried(peripheral)
    }

    /// A grace timer ended: a stale one means nothing; else arm what is
    /// there now, then look at the link (``Input/gattLooked(_:_:)``).
    mutating func gattGraceEnded(_ peripheral: PeripheralID, generation: UInt64) -> [Effect] {
        guard gattGrace.timerEnded(for: peripheral, generation: generation) == .lookAgain else { return [] }
        return [.subscriptionCommands(planner.linkUp(peripheral)), .lookAtGatt(peripheral)]
    }

    /// What the link shows after a look: nothing when arming started no new
    /// wait; else the subscriptions the peripheral cannot serve fail (one
    /// commit), and ``GattGrace`` decides about the rest.
    mutating func gattLooked(_ peripheral: PeripheralID, _ link: LinkGatt?) -> [Effect] {
        guard gattGrace.isWaiting(for: peripheral) else { return [] }
        var missing: [CharacteristicKey: GattGrace.Absence] = [:]
        if let link {
            for key in planner.unarmed(of: peripheral) { missing[key] = link.absence(of: key) }
        }
        let outcome = gattGrace.stillMissing(peripheral, missing, linkUp: link?.connected == true)
        var effects = failSubscriptions(outcome.failed.map { ($0, missing[$0] ?? .databaseNotKnown) }, on: peripheral)
        let keys = missing.keys.sorted()
        switch outcome.decision {
        case nil:
            gattGrace.stopWaiting(for: peripheral)  // nothing left to wait for; the link stays as it is
        case .rediscoverLater(let looksLeft, let first):
            if first { effects.append(.rediscoverLater(peripheral, after: GattGrace.period * looksLeft, missing: keys)) }
        case .rediscover(let attempt):
            effects.append(.rediscoverServices(peripheral, attempt: attempt, missing: keys))
        case .wait:
            effects.append(.waitForGatt(peripheral, missing: keys))
        }
        return effects
    }

    /// Subscriptions the peripheral cannot serve: removed for every
    /// identifier that has them, in one commit with their events, then
    /// auto-connect and the peripheral's viewers follow.
    private mutating func failSubscriptions(_ failed: [(CharacteristicKey, GattGrace.Absence)], on peripheral: PeripheralID) -> [Effect] {
        guard !failed.isEmpty else { return [] }
        var removed: [FailedSubscription] = []
        for (key, absence) in failed {
            let reason = GattGrace.unknownCharacteristic(key, absence)
            for id in planner.route(peripheral, characteristic: key) {
                let subscription = Subscription(identifier: id, peripheral: peripheral, characteristic: key)
                removed.append(FailedSubscription(subscription: subscription, reason: reason, stop: planner.unsubscribe(subscription)))
            }
            gattGrace.forget(peripheral, key)
        }
        return [.failSubscriptions(removed), .applyAutoConnect, .refreshViewers(peripheral)]
    }

    /// Starts waiting for the peripheral's missing characteristics: a timer
    /// of ``GattGrace/period``, none when a wait already runs.
    private mutating func awaitGatt(_ peripheral: PeripheralID) -> [Effect] {
        guard let generation = gattGrace.wait(for: peripheral) else { return [] }
        return [.gattGraceTimer(peripheral, generation: generation)]
    }
}
