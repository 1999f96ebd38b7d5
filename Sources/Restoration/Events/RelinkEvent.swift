public import RelinkModel
/// What happened, for one restore identifier: the store's outbox keeps these
/// in order and the client surface delivers them. Plain values, Codable.
public enum RelinkEvent: Sendable, Hashable, Codable {
    /// A scan of the identifier saw a peripheral (coalesced per peripheral
    /// unless the scan allows duplicates).
    case discovered(peripheral: PeripheralID, advertisement: Advertisement)
    /// The link is up and services are resolved. `limits`: the link's
    /// largest values per write type, when known (the state machine emits
    /// nil; relinkd fills them from bluetoothd's MTU as it stores the event).
    case connected(peripheral: PeripheralID, address: BluetoothAddress, route: ConnectRoute, limits: WriteLimits? = nil)
    /// After a relinkd restart, a link that was up before it is up again
    /// (adopted, not torn down): the first connection is reported this way
    /// instead of `connected`.
    case restored(peripheral: PeripheralID, address: BluetoothAddress, route: ConnectRoute, limits: WriteLimits? = nil)
    /// The intent gave up (deadline, or a failure no retry can fix).
    case failedToConnect(peripheral: PeripheralID, reason: ConnectionFailure)
    /// A link that was reported up went down; reason nil when the client
    /// asked for it.
    case disconnected(peripheral: PeripheralID, reason: ConnectionFailure?)
    /// A subscribed characteristic notified a value.
    case valueNotified(peripheral: PeripheralID, characteristic: CharacteristicKey, value: [UInt8])
    /// The advertising or GAP name changed.
    case nameUpdated(peripheral: PeripheralID, update: NameUpdate)
    /// A subscription could not be armed and was removed: the characteristic
    /// is not on the peripheral (``GattGrace``).
    case subscriptionFailed(peripheral: PeripheralID, characteristic: CharacteristicKey, reason: ConnectionFailure)
    /// The state of relinkd's adapter changed (``AdapterWatch``); about no
    /// peripheral, told to every identifier.
    case adapterStateChanged(adapter: String, status: AdapterStatus)
    /// A connected peripheral's GATT database differs from the one read
    /// before; the new one.
    case servicesChanged(peripheral: PeripheralID, database: GattDatabase)
    /// The bond with the peripheral was removed outside relinkd.
    case bondRemoved(peripheral: PeripheralID)
    /// relinkd's agent asks the identifier's client about a pairing
    /// (`kind`: `passkey`, `confirmation`, …; `passkey`: the one shown).
    case pairingRequest(peripheral: PeripheralID, request: UInt64, kind: String, passkey: UInt32?)
    /// An event of the identifier's peripheral role (a central's request,
    /// a subscription, room for updates); about no peripheral.
    case peripheralManager(PeripheralManagerEvent)
    /// A transfer the identifier started moved on, completed or failed.
    case transfer(TransferEvent)

    /// The peripheral the event is about; nil for an event about none
    /// (``adapterStateChanged(adapter:status:)``).
    public var peripheral: PeripheralID? {
        switch self {
        case .discovered(let peripheral, _), .connected(let peripheral, _, _, _), .restored(let peripheral, _, _, _),
             .failedToConnect(let peripheral, _), .disconnected(let peripheral, _),
             .valueNotified(let peripheral, _, _), .nameUpdated(let peripheral, _), .subscriptionFailed(let peripheral, _, _),
             .servicesChanged(let peripheral, _), .bondRemoved(let peripheral),
             .pairingRequest(let peripheral, _, _, _):
            peripheral
        case .transfer(let event):
            event.status.peripheral
        case .adapterStateChanged, .peripheralManager:
            nil
        }
    }

    /// A short stable name for the journal's `RELINK_EVENT` field.
    public var name: String {
        switch self {
        case .discovered: "discovered"
        case .connected: "connected"
        case .restored: "restored"
        case .failedToConnect: "failed-to-connect"
        case .disconnected: "disconnected"
        case .valueNotified: "value-notified"
        case .nameUpdated: "name-updated"
        case .subscriptionFailed: "subscription-failed"
        case .adapterStateChanged: "adapter-state"
        case .servicesChanged: "services-changed"
        case .bondRemoved: "bond-removed"
        case .pairingRequest: "pairing-request"
        case .peripheralManager(let event): event.name
        case .transfer(let event): event.name
        }
    }
}
