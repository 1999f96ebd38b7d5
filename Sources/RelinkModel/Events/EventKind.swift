/// The kinds of event relinkd sends (`Central1.Event`'s `kind`), by their wire names.
public enum EventKind: String, Sendable, Hashable, CaseIterable {
    /// A scan of the identifier saw a peripheral.
    case discovered
    /// The link is up and services are resolved.
    case connected
    /// After a relinkd restart, a link that was up before is up again.
    case restored
    /// The intent gave up.
    case failedToConnect = "failed-to-connect"
    /// A link that was reported up went down.
    case disconnected
    /// A subscribed characteristic notified a value.
    case valueNotified = "value-notified"
    /// The advertising or GAP name changed.
    case nameUpdated = "name-updated"
    /// A subscription failed (its characteristic is not on the peripheral) and was removed.
    case subscriptionFailed = "subscription-failed"
    /// A subscription's notifications started or stopped flowing on the link.
    case notificationState = "notification-state"
    /// A link to a peripheral matching the identifier's connection-event registration came up or went down.
    case connectionEvent = "connection-event"
    /// The state of relinkd's adapter changed (about no peripheral).
    case adapterState = "adapter-state"
    /// A connected peripheral's GATT database differs from the one relinkd read before.
    case servicesChanged = "services-changed"
    /// Peripheral role: a central reads a characteristic the program must answer.
    case readRequest = "read-request"
    /// Peripheral role: a central wrote a characteristic.
    case writeRequest = "write-request"
    /// Peripheral role: a central subscribed to a characteristic.
    case subscribed
    /// Peripheral role: a central unsubscribed.
    case unsubscribed
    /// Peripheral role: there is room for updates again.
    case readyToUpdate = "ready-to-update"
    /// A transfer's chunks were confirmed (at a bounded rate).
    case transferProgress = "transfer-progress"
    /// A transfer's every byte was confirmed.
    case transferCompleted = "transfer-completed"
    /// A transfer ended before its end.
    case transferFailed = "transfer-failed"
    /// The peripheral's bond was removed outside relinkd (`bluetoothctl remove`).
    case bondRemoved = "bond-removed"
    /// relinkd's agent asks the client about a pairing it started (`AnswerPairing`).
    case pairingRequest = "pairing-request"

    /// The payload's single top-level key: the kind in camel case
    /// (`failed-to-connect` is `failedToConnect`).
    public var payloadKey: String {
        let words = rawValue.split(separator: "-")
        return words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    }
}
