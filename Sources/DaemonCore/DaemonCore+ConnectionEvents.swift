public import RelinkModel
public import Restoration

// Links made and lost at the system level, told to the identifiers that
// registered for them (`connection-event`, issue 35 item 3): the decisions
// are ``ConnectionEventWatch``'s; this feeds it and turns what it tells into
// the effect that stores it.
extension DaemonCore {
    /// Why a link told connected is told disconnected when it ended while
    /// relinkd was not running (start-up found it down).
    static var endedUnseen: ConnectionFailure {
        ConnectionFailure(.transient, errorName: RelinkErrorName.linkLost.rawValue,
                          message: "the link went down while relinkd was not running")
    }

    /// The effect that tells and stores `told`; none when it is empty.
    static func told(_ told: ConnectionEventWatch.Told) -> [Effect] {
        told.isEmpty ? [] : [.connectionEvents(told)]
    }

    /// A device's link came up, went down, or its services became known.
    /// A link that went down is `LinkLost` with bluetoothd's cause, as a
    /// relink intent's `disconnected` says it.
    mutating func peerLinkChanged(_ link: ConnectionEventWatch.PeerLink, cause: LinkEndCause?) -> [Effect] {
        Self.told(connectionEvents.observed(link, reason: link.connected ? nil : Self.linkLostFailure("the link went down", cause: cause)))
    }

    /// Every link up now, read at start-up (`atStart`) or once bluetoothd
    /// is back: what ended unseen is told, and what matches and was not.
    mutating func peersNow(_ links: [ConnectionEventWatch.PeerLink], atStart: Bool) -> [Effect] {
        Self.told(connectionEvents.reconcile(connected: links, reason: atStart ? Self.endedUnseen : .bluetoothdRestarted))
    }

    /// The identifier's registration was stored: it is the one from now on.
    mutating func connectionEventsStored(_ id: RestoreIdentifier, _ registration: ConnectionEventRegistration?,
                                         connectedNow: [ConnectionEventWatch.PeerLink]) -> [Effect] {
        connectionEvents.stored(id, registration, connectedNow: connectedNow)
        return []
    }

    /// bluetoothd left the bus: every told link is gone with it.
    mutating func peersGone() -> [Effect] {
        Self.told(connectionEvents.allGone(reason: Self.bluetoothdGone))
    }
}
