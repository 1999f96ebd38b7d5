public import Foundation
public import RelinkModel

/// An event's payload as it travels (`Central1.Event`'s `payload`, the
/// outbox): JSON, an object with a single key (the kind in camel case) whose
/// value holds the event's fields (docs/api/events.md, "Kinds and payloads").
///
/// The format is written out here, field by field, and versioned
/// (``formatVersion``): it is relink's contract with its clients, not the
/// encoding of an internal type, so the core can change without clients
/// noticing. relinkd encodes it; the client library and relinkctl decode it.
public enum EventPayload: Sendable, Hashable {
    /// The payload format this build writes and reads.
    public static let formatVersion = 2

    /// `discovered`: a scan saw a peripheral.
    case discovered(peripheral: PeripheralID, advertisement: Advertisement)
    /// `connected`: the link is up, services resolved; `limits`, the
    /// largest value per write type, when the link's MTU is known.
    case connected(peripheral: PeripheralID, address: BluetoothAddress, route: ConnectRoute, limits: WriteLimits? = nil)
    /// `restored`: after a relinkd restart, a link that was up is up again;
    /// `limits` as `connected`.
    case restored(peripheral: PeripheralID, address: BluetoothAddress, route: ConnectRoute, limits: WriteLimits? = nil)
    /// `failed-to-connect`: the intent gave up.
    case failedToConnect(peripheral: PeripheralID, reason: ConnectionFailure)
    /// `disconnected`: a link that was up went down (no reason when the client asked).
    case disconnected(peripheral: PeripheralID, reason: ConnectionFailure?)
    /// `value-notified`: a subscribed characteristic notified a value.
    case valueNotified(peripheral: PeripheralID, characteristic: CharacteristicKey, value: [UInt8])
    /// `name-updated`: the advertising or GAP name changed.
    case nameUpdated(peripheral: PeripheralID, update: NameUpdatePayload)
    /// `subscription-failed`: a subscription's characteristic is not on the
    /// peripheral; relinkd removed the subscription.
    case subscriptionFailed(peripheral: PeripheralID, characteristic: CharacteristicKey, reason: ConnectionFailure)
    /// `adapter-state`: the state of relinkd's adapter (`hci0`) changed;
    /// about no peripheral.
    case adapterState(adapter: String, status: AdapterStatus)
    /// `services-changed`: the peripheral's GATT database differs from the
    /// one relinkd read before; `database` is the new one.
    case servicesChanged(peripheral: PeripheralID, database: GattDatabase)
    /// `bond-removed`: the bond with the peripheral was removed outside
    /// relinkd (bluetoothd's device object removed, or `Paired` gone).
    case bondRemoved(peripheral: PeripheralID)
    /// `pairing-request`: relinkd's agent asks about a pairing it started
    /// for the identifier; answered with `AnswerPairing(request, …)`.
    /// `kind`: `passkey`, `confirmation`, `display-passkey`,
    /// `authorization`, `pin-code`; `passkey`: the one shown, if any.
    case pairingRequest(peripheral: PeripheralID, request: UInt64, kind: String, passkey: UInt32?)
    /// `read-request`, `write-request`, `subscribed`, `unsubscribed`,
    /// `ready-to-update`: the identifier's peripheral role; about no peripheral.
    case peripheralManager(PeripheralManagerEvent)
    /// `transfer-progress`, `transfer-completed`, `transfer-failed`: a
    /// transfer the identifier started.
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
        case .adapterState: .adapterState
        case .servicesChanged: .servicesChanged
        case .bondRemoved: .bondRemoved
        case .pairingRequest: .pairingRequest
        case .peripheralManager(let event):
            switch event {
            case .readRequest: .readRequest
            case .writeRequest: .writeRequest
            case .subscribed: .subscribed
            case .unsubscribed: .unsubscribed
            case .readyToUpdate: .readyToUpdate
            }
        case .transfer(let event):
            switch event {
            case .progress: .transferProgress
            case .completed: .transferCompleted
            case .failed: .transferFailed
            }
        }
    }

    /// The peripheral the event is about; nil for `adapter-state`, which
    /// is about none.
    public var peripheral: PeripheralID? {
        switch self {
        case .discovered(let p, _), .connected(let p, _, _, _), .restored(let p, _, _, _), .failedToConnect(let p, _),
             .disconnected(let p, _), .valueNotified(let p, _, _), .nameUpdated(let p, _), .subscriptionFailed(let p, _, _),
             .servicesChanged(let p, _), .bondRemoved(let p), .pairingRequest(let p, _, _, _):
            p
        case .transfer(let event):
            event.status.peripheral
        case .adapterState, .peripheralManager:
            nil
        }
    }

    /// The compact JSON with sorted keys that relinkd stores and sends.
    /// - Throws: an `EncodingError` (none is expected for valid values).
    public func encoded() throws -> Data {
        if case .valueNotified(let peripheral, let characteristic, let value) = self {
            return Self.valueNotifiedJSON(peripheral: peripheral, characteristic: characteristic, value: value)
        }
        return try encodedByJSONEncoder()
    }

    /// Decodes a payload of `kind`.
    /// - Throws: `DecodingError` when the JSON is not a payload of that kind.
    public init(kind: EventKind, json: Data) throws {
        let decoded = try JSONDecoder().decode(Wire.self, from: json).payload
        guard decoded.kind == kind else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a \(decoded.kind.rawValue) payload for a \(kind.rawValue) event"))
        }
        self = decoded
    }
}

/// The payload of a `name-updated` event: which name changed, the name the
/// identifier should now show and why, and both names with when each was seen.
public struct NameUpdatePayload: Sendable, Hashable {
    /// Which name changed, from what, to what.
    public var change: NameChange
    /// The resolved name, nil when no name is known.
    public var resolved: Resolved?
    /// Both names with when each was last seen.
    public var names: PeripheralNames

    /// The name an identifier shows, where it comes from and why.
    public struct Resolved: Sendable, Hashable {
        /// The name.
        public var name: String
        /// Which of the two names it is.
        public var source: NameSource
        /// Why it was chosen: `gapNameKnown`, `noGAPNameYet`,
        /// `advertisingNamePreferred` or `noAdvertisingNameYet`.
        public var reason: String

        /// A resolved name.
        public init(name: String, source: NameSource, reason: String) {
            self.name = name
            self.source = source
            self.reason = reason
        }
    }

    /// A name update.
    public init(change: NameChange, resolved: Resolved?, names: PeripheralNames) {
        self.change = change
        self.resolved = resolved
        self.names = names
    }
}
