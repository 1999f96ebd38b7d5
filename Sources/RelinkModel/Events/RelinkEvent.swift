/// What happened, for one restore identifier: the one type of relink's
/// events. The core emits it, the store's outbox keeps it in order, relinkd
/// sends it (`Central1.Event`), the client library and relinkctl read it
/// back. Its wire form, written out field by field and versioned, is
/// RelinkAPI's (`RelinkEvent+Wire.swift`, docs/api/events.md), so the JSON
/// clients read is a contract and not the encoding of an internal type.
public enum RelinkEvent: Sendable, Hashable {
    /// `discovered`: a scan of the identifier saw a peripheral (coalesced
    /// per peripheral unless the scan allows duplicates).
    case discovered(peripheral: PeripheralID, advertisement: Advertisement)
    /// `connected`: the link is up and services are resolved. `limits`: the
    /// link's largest values per write type, when its MTU is known (the
    /// state machine emits nil; relinkd fills them from bluetoothd's MTU as
    /// it stores the event).
    case connected(peripheral: PeripheralID, address: BluetoothAddress, route: ConnectRoute, limits: WriteLimits? = nil)
    /// `restored`: after a relinkd restart, a link that was up before it is
    /// up again (adopted, not torn down): the first connection is reported
    /// this way instead of `connected`; `limits` as `connected`.
    case restored(peripheral: PeripheralID, address: BluetoothAddress, route: ConnectRoute, limits: WriteLimits? = nil)
    /// `failed-to-connect`: the intent gave up (deadline, or a failure no
    /// retry can fix).
    case failedToConnect(peripheral: PeripheralID, reason: ConnectionFailure)
    /// `disconnected`: a link that was reported up went down; reason nil
    /// when the client asked for it.
    case disconnected(peripheral: PeripheralID, reason: ConnectionFailure?)
    /// `value-notified`: a subscribed characteristic notified a value.
    case valueNotified(peripheral: PeripheralID, characteristic: CharacteristicKey, value: [UInt8])
    /// `name-updated`: the advertising or GAP name changed.
    case nameUpdated(peripheral: PeripheralID, update: NameUpdate)
    /// `subscription-failed`: a subscription could not be armed and was
    /// removed: the characteristic is not on the peripheral.
    case subscriptionFailed(peripheral: PeripheralID, characteristic: CharacteristicKey, reason: ConnectionFailure)
    /// `notification-state`: a subscription's notifications started
    /// flowing on the link (`notifying` true: bluetoothd armed them) or
    /// stopped (`notifying` false, `reason` why: the link lost, bluetoothd
    /// or the adapter gone, the peripheral refused, the characteristic
    /// gone; nil when the identifier unsubscribed). CoreBluetooth's
    /// `peripheral(_:didUpdateNotificationStateFor:error:)`.
    case notificationState(peripheral: PeripheralID, characteristic: CharacteristicKey, notifying: Bool, reason: ConnectionFailure?)
    /// `connection-event`: a link to a peripheral that matches the
    /// identifier's `RegisterForConnectionEvents` came up (`connected`
    /// true) or went down, made by any program on the system (CoreBluetooth's
    /// `centralManager(_:connectionEventDidOccur:for:)`, `peerConnected` and
    /// `peerDisconnected`). `address`: the peripheral's, when known;
    /// `reason`: why the link went down, when relinkd knows.
    case connectionEvent(peripheral: PeripheralID, address: BluetoothAddress?, connected: Bool, reason: ConnectionFailure?)
    /// `adapter-state`: the state of relinkd's adapter (`hci0`) changed;
    /// about no peripheral, told to every identifier.
    case adapterState(adapter: String, status: AdapterStatus)
    /// `services-changed`: a connected peripheral's GATT database differs
    /// from the one relinkd read before; `database` is the new one.
    case servicesChanged(peripheral: PeripheralID, database: GattDatabase)
    /// `bond-removed`: the bond with the peripheral was removed outside
    /// relinkd (bluetoothd's device object removed, or `Paired` gone).
    case bondRemoved(peripheral: PeripheralID)
    /// `pairing-request`: relinkd's agent asks the identifier's client about
    /// a pairing it started, answered with `AnswerPairing(request, …)`.
    /// `kind`: `passkey`, `confirmation`, `display-passkey`,
    /// `authorization`, `pin-code`; `passkey`: the one shown, if any.
    case pairingRequest(peripheral: PeripheralID, request: UInt64, kind: String, passkey: UInt32?)
    /// `read-request`, `write-request`, `subscribed`, `unsubscribed`,
    /// `ready-to-update`: the identifier's peripheral role; about no peripheral.
    case peripheralManager(PeripheralManagerEvent)
    /// `transfer-progress`, `transfer-completed`, `transfer-failed`: a
    /// transfer the identifier started moved on, completed or failed.
    case transfer(TransferEvent)

    /// The event's kind.
    public var kind: EventKind {
        switch self {
        case .discovered: .discovered
        case .connected: .connected
        case .restored: .restored
        case .failedToConnect: .failedToConnect
        case .disconnected: .disconnected
        case .valueNotified: .valueNotified
        case .nameUpdated: .nameUpdated
        case .subscriptionFailed: .subscriptionFailed
        case .notificationState: .notificationState
        case .connectionEvent: .connectionEvent
        case .adapterState: .adapterState
        case .servicesChanged: .servicesChanged
        case .bondRemoved: .bondRemoved
        case .pairingRequest: .pairingRequest
        case .peripheralManager(let event): event.kind
        case .transfer(let event): event.kind
        }
    }

    /// The kind's wire name, also the journal's `RELINK_EVENT` field and
    /// the outbox's `kind` column.
    public var name: String { kind.rawValue }

    /// The peripheral the event is about; nil for an event about none
    /// (``adapterState(adapter:status:)``, the peripheral role's).
    public var peripheral: PeripheralID? {
        switch self {
        case .discovered(let peripheral, _), .connected(let peripheral, _, _, _), .restored(let peripheral, _, _, _),
             .failedToConnect(let peripheral, _), .disconnected(let peripheral, _),
             .valueNotified(let peripheral, _, _), .nameUpdated(let peripheral, _), .subscriptionFailed(let peripheral, _, _),
             .notificationState(let peripheral, _, _, _), .connectionEvent(let peripheral, _, _, _),
             .servicesChanged(let peripheral, _), .bondRemoved(let peripheral),
             .pairingRequest(let peripheral, _, _, _):
            peripheral
        case .transfer(let event):
            event.status.peripheral
        case .adapterState, .peripheralManager:
            nil
        }
    }
}
