import Foundation
import Restoration
import RelinkModel

/// Who called: the unique bus name and its Unix user.
public struct APICaller: Sendable, Hashable {
    public var name: String
    public var uid: UInt32
    public init(name: String, uid: UInt32) {
        self.name = name
        self.uid = uid
    }

    /// Root sees and changes everything.
    var isRoot: Bool { uid == 0 }

    /// Whether the caller may see and change an identifier owned by `owner`.
    func mayUse(ownedBy owner: UInt32) -> Bool { isRoot || uid == owner }
}

/// A client attached to an identifier (by `Register` or `Watch`).
struct Attachment: Sendable, Hashable {
    var uid: UInt32
    /// False between the attaching call and its reply: live events wait
    /// (they are in the store and go out with the replay).
    var live: Bool
    /// The highest sequence number sent to it.
    var cursor: Int64
}

/// The daemon's client-API state (owned by the daemon's loop).
struct APIState: Sendable {
    var owners: [RestoreIdentifier: UInt32] = [:]
    var outboxes: [RestoreIdentifier: OutboxCursor] = [:]
    var sequencers: [RestoreIdentifier: EventSequencer] = [:]
    var attachments: [RestoreIdentifier: [String: Attachment]] = [:]
    /// Peripherals each user's identifiers discovered since relinkd started.
    var discoveredBy: [UInt32: Set<PeripheralID>] = [:]
    /// Peripherals each user's identifiers had a connection intent or a
    /// subscription on since relinkd started (the loaded ones included):
    /// what a user may still name in `Unpair` once it gave up its last use
    /// (Daemon+PairingAccess.swift).
    var usedBy: [UInt32: Set<PeripheralID>] = [:]
    /// When each peripheral was last seen advertising or connected (since start).
    var lastSeen: [PeripheralID: Date] = [:]
    /// Unique names that left the bus lately: never attached again (a
    /// call may be handled after its caller's NameOwnerChanged).
    var recentlyLeft: Set<String> = []
    /// Coalesces `PropertiesChanged` of each identifier's outbox properties.
    var outboxSignals = SignalThrottle<RestoreIdentifier, ContinuousClock.Instant>(interval: Daemon.outboxSignalInterval)
    var recentlyLeftOrder: [String] = []

    mutating func noteLeft(_ name: String) {
        guard recentlyLeft.insert(name).inserted else { return }
        recentlyLeftOrder.append(name)
        if recentlyLeftOrder.count > 4096 {
            recentlyLeft.remove(recentlyLeftOrder.removeFirst())
        }
    }

    /// Attached clients of `id` whose user may see it.
    func clients(of id: RestoreIdentifier) -> [String] {
        (attachments[id] ?? [:]).keys.sorted()
    }
}
