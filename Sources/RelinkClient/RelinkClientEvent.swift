public import Foundation
import RelinkAPI
public import RelinkModel

/// One event of a restore identifier, as relinkd delivers it
/// (`Central1.Event` signals and `Central1.Events`): its sequence number,
/// its kind, and its payload decoded by the API contract's wire format
/// (``RelinkModel/RelinkEvent``, read by RelinkAPI's `RelinkEvent+Wire`).
public struct RelinkClientEvent: Sendable, Hashable {
    /// The kind of an event, as relinkd names it. Kinds this library does
    /// not know keep their name (``payload`` is then nil).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The wire name, e.g. `value-notified`.
        public let rawValue: String
        /// A kind by its wire name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A kind of the contract.
        public init(_ kind: EventKind) { self.rawValue = kind.rawValue }
        /// The wire name.
        public var description: String { rawValue }

        /// Whether the kind is the contract's `kind`: `event.kind == .connected`.
        public static func == (lhs: Kind, rhs: EventKind) -> Bool { lhs.rawValue == rhs.rawValue }

        /// Whether the kind is not the contract's `kind`.
        public static func != (lhs: Kind, rhs: EventKind) -> Bool { lhs.rawValue != rhs.rawValue }
    }

    /// Grows by one per event of the identifier (gaps only where the
    /// outbox bound dropped events).
    public var sequence: UInt64
    /// The event's kind.
    public var kind: Kind
    /// The payload JSON exactly as relinkd sent it.
    public var payloadJSON: String
    /// The decoded payload; nil when it could not be decoded (an unknown
    /// kind, or a payload that does not match its kind).
    public var payload: RelinkEvent?
    /// When relinkd stored the event (the payload's `atMs`): for a value,
    /// when it came from the peripheral, however late the program reads
    /// it. Nil for an event stored by a relinkd before it wrote the time.
    public var time: Date?

    /// Decodes an event; never fails (an undecodable payload gives `payload == nil`).
    public init(sequence: UInt64, kind: String, payloadJSON: String) {
        self.sequence = sequence
        self.kind = Kind(rawValue: kind)
        self.payloadJSON = payloadJSON
        if let known = EventKind(rawValue: kind), let decoded = try? RelinkEvent.decoded(kind: known, json: Data(payloadJSON.utf8)) {
            self.payload = decoded.event
            self.time = decoded.at
        } else {
            self.payload = nil
            self.time = nil
        }
    }

    /// The peripheral the event is about, when the payload was decoded.
    public var peripheral: PeripheralID? { payload?.peripheral }

    /// The adapter's new state and roles, for an `adapter-state` event.
    public var adapterStatus: AdapterStatus? {
        if case .adapterState(_, let status)? = payload { return status }
        return nil
    }

    /// A `notification-state` event (CoreBluetooth's
    /// `peripheral(_:didUpdateNotificationStateFor:error:)`): the
    /// characteristic, whether it notifies now, and why it stopped (nil
    /// when it started, or when the identifier unsubscribed).
    public var notificationState: (characteristic: CharacteristicKey, notifying: Bool, reason: ConnectionFailure?)? {
        if case .notificationState(_, let key, let notifying, let reason)? = payload { return (key, notifying, reason) }
        return nil
    }

    /// A `connection-event`'s link at the system level: whether it came up
    /// (`peer-connected`) or went down, the peripheral's address when
    /// known, and why it went down when relinkd knows (CoreBluetooth's
    /// `centralManager(_:connectionEventDidOccur:for:)`).
    public var connectionEvent: (connected: Bool, address: BluetoothAddress?, reason: ConnectionFailure?)? {
        if case .connectionEvent(_, let address, let connected, let reason)? = payload { return (connected, address, reason) }
        return nil
    }

    /// The notified bytes of a `value-notified` event.
    public var value: [UInt8]? {
        if case .valueNotified(_, _, let value)? = payload { return value }
        return nil
    }

    /// The peripheral's new GATT database, for a `services-changed` event
    /// (CoreBluetooth's `peripheral(_:didModifyServices:)`).
    public var gattDatabase: GattDatabase? {
        if case .servicesChanged(_, let database)? = payload { return database }
        return nil
    }

    /// A transfer's progress, completion or failure (naming the offset
    /// reached), for the `transfer-*` kinds.
    public var transferEvent: TransferEvent? {
        if case .transfer(let event)? = payload { return event }
        return nil
    }

    /// The peripheral role's event (a read or write request, a
    /// subscription, room for updates), for the kinds of
    /// ``RelinkPeripheralManager``; nil for the central role's kinds.
    public var peripheralManagerEvent: PeripheralManagerEvent? {
        if case .peripheralManager(let event)? = payload { return event }
        return nil
    }

    /// The link's largest value per write type, for a `connected` or
    /// `restored` event that carries them (the MTU was known).
    public var writeLimits: WriteLimits? {
        switch payload {
        case .connected(_, _, _, let limits)?, .restored(_, _, _, let limits)?: limits
        default: nil
        }
    }
}
