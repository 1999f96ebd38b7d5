import Foundation
import Restoration
import RelinkModel

/// One event of a restore identifier, as relinkd delivers it
/// (`Central1.Event` signals and `Central1.Events`): its sequence number,
/// its kind, and its payload decoded into the restoration core's
/// ``RelinkEvent``.
public struct RelinkClientEvent: Sendable, Hashable {
    /// The kind of an event, as relinkd names it. Kinds this library does
    /// not know keep their name (``payload`` is then nil).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let discovered = Kind(rawValue: "discovered")
        public static let connected = Kind(rawValue: "connected")
        public static let restored = Kind(rawValue: "restored")
        public static let failedToConnect = Kind(rawValue: "failed-to-connect")
        public static let disconnected = Kind(rawValue: "disconnected")
        public static let valueNotified = Kind(rawValue: "value-notified")
        public static let nameUpdated = Kind(rawValue: "name-updated")
    }

    /// Grows by one per event of the identifier (gaps only where the
    /// outbox bound dropped events).
    public var sequence: UInt64
    public var kind: Kind
    /// The payload JSON exactly as relinkd sent it.
    public var payloadJSON: String
    /// The decoded payload; nil when it could not be decoded (an unknown
    /// kind, or a payload that does not match its kind).
    public var payload: RelinkEvent?

    /// Decodes an event; never fails (an undecodable payload gives `payload == nil`).
    public init(sequence: UInt64, kind: String, payloadJSON: String) {
        self.sequence = sequence
        self.kind = Kind(rawValue: kind)
        self.payloadJSON = payloadJSON
        if let event = try? JSONDecoder().decode(RelinkEvent.self, from: Data(payloadJSON.utf8)), event.name == kind {
            self.payload = event
        } else {
            self.payload = nil
        }
    }

    /// The peripheral the event is about, when the payload was decoded.
    public var peripheral: PeripheralID? { payload?.peripheral }

    /// The notified bytes of a `value-notified` event.
    public var value: [UInt8]? {
        if case .valueNotified(_, _, let value)? = payload { return value }
        return nil
    }
}
