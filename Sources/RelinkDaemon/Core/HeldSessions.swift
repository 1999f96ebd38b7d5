import DBus
import Restoration
import RelinkModel

/// The notify sessions relinkd holds with bluetoothd, and values notified
/// on them while a link is coming back.
///
/// bluetoothd keeps a client's StartNotify sessions across disconnections
/// and re-arms them (writes the CCCD) at every reconnection, for as long as
/// the client stays on the bus (bluez-facts.md, Notifications). So when a
/// link comes back, values flow before relinkd has seen `ServicesResolved`
/// and re-armed its subscriptions. Such values are kept here and go to the
/// outbox right after the link's `connected` event, in the same commit,
/// instead of being dropped as values on an unarmed characteristic.
///
/// A session is forgotten when bluetoothd or the adapter goes away (every
/// session ends), on StopNotify, and when StartNotify fails. Values are kept
/// only while the link is up and at most ``limit`` per peripheral (oldest
/// dropped); a link that goes down again discards them.
struct HeldSessions: Sendable {
    /// The characteristic object each session is on.
    private var paths: [PeripheralID: [CharacteristicKey: ObjectPath]] = [:]
    private var early: [PeripheralID: [RestoreBatch.Request]] = [:]
    static let limit = 64
    /// Grows when every session ends (``endAll()``).
    private var epoch: UInt64 = 0
    /// Per peripheral, grows when its link goes down (``linkDown(_:)``).
    private var links: [PeripheralID: UInt64] = [:]

    /// When a StartNotify was issued: its outcome arrives later, and may by
    /// then be about a link, or a bluetoothd, that is gone.
    struct Issued: Sendable, Equatable {
        var epoch: UInt64
        var link: UInt64
    }

    /// Stamps a StartNotify issued now on the peripheral's link.
    func issue(_ peripheral: PeripheralID) -> Issued {
        Issued(epoch: epoch, link: links[peripheral, default: 0])
    }

    /// Whether every session still stands as when `issued` was stamped
    /// (a session outlives its link, not its bluetoothd).
    func sessionsLast(since issued: Issued) -> Bool { issued.epoch == epoch }

    /// Whether the peripheral's link is the one `issued` was stamped on.
    func sameLink(_ peripheral: PeripheralID, since issued: Issued) -> Bool {
        issued.epoch == epoch && issued.link == links[peripheral, default: 0]
    }

    /// StartNotify succeeded on `path`.
    mutating func started(_ peripheral: PeripheralID, _ key: CharacteristicKey, on path: ObjectPath) {
        paths[peripheral, default: [:]][key] = path
    }

    /// StopNotify, or StartNotify failed: no session.
    mutating func ended(_ peripheral: PeripheralID, _ key: CharacteristicKey) {
        paths[peripheral]?[key] = nil
    }

    /// The characteristic object a session was on is gone (the peripheral's
    /// GATT database changed on a live link): that session ended. Returns
    /// whose it was, nil when relinkd held none there.
    mutating func ended(onObject path: ObjectPath) -> (PeripheralID, CharacteristicKey)? {
        for (peripheral, sessions) in paths {
            if let key = sessions.first(where: { $0.value == path })?.key {
                paths[peripheral]?[key] = nil
                return (peripheral, key)
            }
        }
        return nil
    }

    /// bluetoothd or the adapter went away: every session ended.
    mutating func endAll() {
        paths = [:]
        early = [:]
        epoch += 1
    }

    /// Whether relinkd holds a session on this characteristic object.
    func holds(_ peripheral: PeripheralID, _ key: CharacteristicKey, on path: ObjectPath) -> Bool {
        paths[peripheral]?[key] == path
    }

    /// Keeps a value's outbox request until the link is reported up.
    /// - Returns: false when the oldest kept value had to be dropped.
    mutating func keep(_ request: RestoreBatch.Request, for peripheral: PeripheralID) -> Bool {
        var kept = early[peripheral, default: []]
        kept.append(request)
        let overflow = kept.count > Self.limit
        if overflow { kept.removeFirst() }
        early[peripheral] = kept
        return !overflow
    }

    /// The link is reported up: the kept values, oldest first.
    mutating func release(_ peripheral: PeripheralID) -> [RestoreBatch.Request] {
        early.removeValue(forKey: peripheral) ?? []
    }

    /// The link went down: kept values are dropped.
    mutating func linkDown(_ peripheral: PeripheralID) {
        early[peripheral] = nil
        links[peripheral, default: 0] += 1
    }

    /// How many values are kept for a peripheral (for tests and the journal).
    func keptCount(_ peripheral: PeripheralID) -> Int { early[peripheral]?.count ?? 0 }
}
