public import RelinkModel
/// Decides which characteristics to StartNotify on a peripheral's link, and
/// to whom each notified value goes.
///
/// Every subscription of every identifier is kept; per peripheral the
/// planner knows which characteristics are armed on the current link. So:
/// * after a (re)connection, ``linkUp(_:)`` returns each wanted
///   characteristic exactly once, however many identifiers want it and
///   however often it is called for the same link;
/// * ``route(_:characteristic:)`` returns each subscribed identifier once, so
///   a value is delivered once per identifier: after any number of
///   reconnects nothing is doubled;
/// * ``linkDown(_:)`` and ``resetAll()`` (bluetoothd restart, relinkd start:
///   BlueZ's notify sessions are gone) clear the armed state;
/// * a characteristic is *notifying* once bluetoothd confirmed its
///   StartNotify on the current link (``confirmArmed(_:_:)``) and until the
///   link, the session or the subscription ends: what each identifier is
///   told in `notification-state` events and `Register`'s `notifying`.
public struct SubscriptionPlanner: Sendable {
    /// What to do on the link.
    public enum Command: Sendable, Hashable {
        case startNotify(PeripheralID, CharacteristicKey)
        case stopNotify(PeripheralID, CharacteristicKey)
    }

    private var wanted: [PeripheralID: [CharacteristicKey: Set<RestoreIdentifier>]] = [:]
    private var armed: [PeripheralID: Set<CharacteristicKey>] = [:]
    private var linked: Set<PeripheralID> = []
    /// Armed and confirmed by bluetoothd on the current link.
    private var notifying: [PeripheralID: Set<CharacteristicKey>] = [:]
    /// Refused by the peripheral on the current link, already told.
    private var refused: [PeripheralID: Set<CharacteristicKey>] = [:]

    public init() {}

    /// Adds a subscription. Returns `startNotify` when the link is up and no
    /// other identifier had already armed the characteristic.
    public mutating func subscribe(_ subscription: Subscription) -> [Command] {
        let peripheral = subscription.peripheral, key = subscription.characteristic
        wanted[peripheral, default: [:]][key, default: []].insert(subscription.identifier)
        return armIfNeeded(peripheral, key)
    }

    /// Removes a subscription. Returns `stopNotify` when it was the last
    /// identifier wanting an armed characteristic.
    public mutating func unsubscribe(_ subscription: Subscription) -> [Command] {
        let peripheral = subscription.peripheral, key = subscription.characteristic
        guard var identifiers = wanted[peripheral]?[key], identifiers.remove(subscription.identifier) != nil else { return [] }
        if identifiers.isEmpty {
            wanted[peripheral]?[key] = nil
            if wanted[peripheral]?.isEmpty == true { wanted[peripheral] = nil }
            notifying[peripheral]?.remove(key)
            refused[peripheral]?.remove(key)
            if armed[peripheral]?.remove(key) != nil { return [.stopNotify(peripheral, key)] }
        } else {
            wanted[peripheral]?[key] = identifiers
        }
        return []
    }

    /// Removes every subscription of an identifier (it was unregistered).
    public mutating func removeAll(of identifier: RestoreIdentifier) -> [Command] {
        var commands: [Command] = []
        for (peripheral, keys) in wanted.sorted(by: { $0.key < $1.key }) {
            for key in keys.keys.sorted() where keys[key]?.contains(identifier) == true {
                commands += unsubscribe(Subscription(identifier: identifier, peripheral: peripheral, characteristic: key))
            }
        }
        return commands
    }

    /// The link to `peripheral` is up with services resolved: StartNotify
    /// every wanted characteristic not yet armed on this link (sorted).
    public mutating func linkUp(_ peripheral: PeripheralID) -> [Command] {
        linked.insert(peripheral)
        return (wanted[peripheral]?.keys.sorted() ?? []).flatMap { armIfNeeded(peripheral, $0) }
    }

    /// The link is down: its notify sessions no longer count. Returns the
    /// characteristics that were notifying on it (sorted).
    @discardableResult
    public mutating func linkDown(_ peripheral: PeripheralID) -> [CharacteristicKey] {
        linked.remove(peripheral)
        armed[peripheral] = nil
        refused[peripheral] = nil
        return (notifying.removeValue(forKey: peripheral) ?? []).sorted()
    }

    /// StartNotify failed, or the armed characteristic's object left the
    /// link: it is armed again at the next `linkUp`. Returns whether it was
    /// notifying.
    @discardableResult
    public mutating func startNotifyFailed(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> Bool {
        armed[peripheral]?.remove(key)
        return notifying[peripheral]?.remove(key) != nil
    }

    /// bluetoothd confirmed the StartNotify of `key` on the current link:
    /// it is notifying. Returns the identifiers to tell (every subscriber,
    /// sorted) when it was not notifying yet; none when it was, or when it
    /// is no longer armed (the link went down or the last subscriber left
    /// while the call was out).
    public mutating func confirmArmed(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> [RestoreIdentifier] {
        guard armed[peripheral]?.contains(key) == true else { return [] }
        refused[peripheral]?.remove(key)
        guard notifying[peripheral, default: []].insert(key).inserted else { return [] }
        return route(peripheral, characteristic: key)
    }

    /// The peripheral refused the StartNotify of `key` (armed again at the
    /// next `linkUp`). Returns the identifiers to tell: every subscriber the
    /// first time on this link, none after.
    public mutating func notifyRefused(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> [RestoreIdentifier] {
        startNotifyFailed(peripheral, key)
        guard linked.contains(peripheral), wanted[peripheral]?[key] != nil,
              refused[peripheral, default: []].insert(key).inserted else { return [] }
        return route(peripheral, characteristic: key)
    }

    /// Whether `key` is notifying on the peripheral's current link.
    public func isNotifying(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> Bool {
        notifying[peripheral]?.contains(key) == true
    }

    /// Every link and notify session is gone (bluetoothd restart, or relinkd
    /// starting from the store).
    /// Returns the characteristics that were notifying, per peripheral.
    @discardableResult
    public mutating func resetAll() -> [PeripheralID: [CharacteristicKey]] {
        linked = []
        armed = [:]
        refused = [:]
        defer { notifying = [:] }
        return notifying.filter { !$0.value.isEmpty }.mapValues { $0.sorted() }
    }

    /// The identifiers a value notified on `characteristic` goes to, each
    /// once, sorted. Empty for a characteristic nobody subscribed.
    public func route(_ peripheral: PeripheralID, characteristic key: CharacteristicKey) -> [RestoreIdentifier] {
        (wanted[peripheral]?[key] ?? []).sorted()
    }

    /// The services of the characteristics subscribed on a peripheral, by
    /// any identifier.
    public func wantedServices(of peripheral: PeripheralID) -> Set<BluetoothUUID> {
        Set((wanted[peripheral] ?? [:]).keys.map(\.service))
    }

    /// The characteristics wanted on a linked peripheral but not armed on
    /// its link (StartNotify failed or the object is missing), sorted.
    /// Empty when the link is down.
    public func unarmed(of peripheral: PeripheralID) -> [CharacteristicKey] {
        guard linked.contains(peripheral) else { return [] }
        let armedKeys = armed[peripheral] ?? []
        return (wanted[peripheral]?.keys.sorted() ?? []).filter { !armedKeys.contains($0) }
    }

    /// ``unarmed(of:)`` limited to the characteristics `identifier`
    /// subscribes to: what `Status` and `STATUS=` show as not armed.
    public func unarmed(of peripheral: PeripheralID, for identifier: RestoreIdentifier) -> [CharacteristicKey] {
        unarmed(of: peripheral).filter { wanted[peripheral]?[$0]?.contains(identifier) == true }
    }

    /// The characteristics armed on the current link.
    public func armedCharacteristics(of peripheral: PeripheralID) -> Set<CharacteristicKey> {
        armed[peripheral] ?? []
    }

    /// Whether `subscription` is kept: constant time, where
    /// ``subscriptions`` builds the whole set.
    public func contains(_ subscription: Subscription) -> Bool {
        wanted[subscription.peripheral]?[subscription.characteristic]?.contains(subscription.identifier) == true
    }

    /// The identifiers subscribed to any characteristic of `peripheral`:
    /// in time of that peripheral's subscriptions, not of all of them.
    public func identifiers(subscribedOn peripheral: PeripheralID) -> Set<RestoreIdentifier> {
        var result: Set<RestoreIdentifier> = []
        for identifiers in (wanted[peripheral] ?? [:]).values { result.formUnion(identifiers) }
        return result
    }

    /// The peripherals with at least one subscription.
    public var subscribedPeripherals: Set<PeripheralID> { Set(wanted.keys) }

    /// Every subscription, for persistence and inspection. Builds the whole
    /// set: not for a question about one peripheral or one subscription
    /// (``contains(_:)``, ``identifiers(subscribedOn:)``), which asked once
    /// per peripheral makes a loop quadratic.
    public var subscriptions: Set<Subscription> {
        var result: Set<Subscription> = []
        for (peripheral, keys) in wanted {
            for (key, identifiers) in keys {
                for identifier in identifiers {
                    result.insert(Subscription(identifier: identifier, peripheral: peripheral, characteristic: key))
                }
            }
        }
        return result
    }

    private mutating func armIfNeeded(_ peripheral: PeripheralID, _ key: CharacteristicKey) -> [Command] {
        guard linked.contains(peripheral), wanted[peripheral]?[key] != nil else { return [] }
        guard armed[peripheral, default: []].insert(key).inserted else { return [] }
        return [.startNotify(peripheral, key)]
    }
}
