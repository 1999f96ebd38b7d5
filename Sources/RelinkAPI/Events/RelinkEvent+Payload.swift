public import Foundation
public import RelinkModel

// An event's payload as it travels (`Central1.Event`'s `payload`, the
// outbox): JSON, an object with a single key (the kind in camel case) whose
// value holds the event's fields (docs/api/events.md, "Kinds and payloads").
//
// The format is written out here, field by field, and versioned
// (`formatVersion`): it is relink's contract with its clients, not the
// encoding of an internal type, so the core can change without clients
// noticing. relinkd encodes it; the client library and relinkctl decode it.
extension RelinkEvent {
    /// The payload format this build writes and reads.
    public static let formatVersion = 2

    /// The compact JSON with sorted keys that relinkd stores and sends;
    /// `at`, when relinkd stored the event, is written as `atMs`.
    /// - Throws: an `EncodingError` (none is expected for valid values).
    public func encoded(at: Date? = nil) throws -> Data {
        if case .valueNotified(let peripheral, let characteristic, let value) = self {
            return Self.valueNotifiedJSON(peripheral: peripheral, characteristic: characteristic, value: value,
                                          atMs: at?.unixMilliseconds)
        }
        return try encodedByJSONEncoder(at: at)
    }

    /// Decodes a payload of `kind`, with when relinkd stored it (nil for
    /// an event stored before relink wrote the time).
    /// - Throws: `DecodingError` when the JSON is not a payload of that kind.
    public static func decoded(kind: EventKind, json: Data) throws -> (event: RelinkEvent, at: Date?) {
        let wire = try JSONDecoder().decode(Wire.self, from: json)
        guard wire.payload.kind == kind else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a \(wire.payload.kind.rawValue) payload for a \(kind.rawValue) event"))
        }
        return (wire.payload, wire.at)
    }

    /// Decodes a payload of `kind` (its time, if any, left aside).
    /// - Throws: `DecodingError` when the JSON is not a payload of that kind.
    public init(kind: EventKind, json: Data) throws {
        self = try Self.decoded(kind: kind, json: json).event
    }
}
