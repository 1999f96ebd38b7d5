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
