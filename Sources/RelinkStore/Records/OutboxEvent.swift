public import Foundation
public import RelinkModel

/// An event waiting in a restore identifier's outbox for its client.
public struct OutboxEvent: Hashable, Sendable, Codable {
    /// Longest event kind, in characters.
    public static let maximumKindLength = 64
    /// Largest payload, in bytes.
    public static let maximumPayloadBytes = 64 * 1024

    public var identifier: RestoreIdentifier
    /// Sequence number: increasing per appended event of this identifier, never
    /// reused; by one, unless the writer chose to skip (`OutboxEventDraft.sequence`).
    public var sequence: Int64
    /// What happened (`connected`, `value-notified`, ...), chosen by the daemon.
    public var kind: String
    /// The event's data (JSON by convention, any bytes allowed).
    public var payload: Data
    public var createdAt: Date

    public init(identifier: RestoreIdentifier, sequence: Int64, kind: String, payload: Data, createdAt: Date) {
        self.identifier = identifier
        self.sequence = sequence
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt.roundedToStoredPrecision
    }
}

/// An event to append. The store assigns its sequence number, unless the
/// writer chose one (`sequence`), as relinkd does to show an event to
/// attached clients before its commit.
public struct OutboxEventDraft: Hashable, Sendable, Codable {
    public var identifier: RestoreIdentifier
    public var kind: String
    public var payload: Data
    public var createdAt: Date
    /// The sequence number chosen by the writer, or nil for the store's
    /// next one. A chosen number must be at least the identifier's next
    /// sequence number (`OutboxStatus.nextSequence`): numbers are never
    /// reused, and may skip.
    public var sequence: Int64?

    /// - Throws: `StoreError.invalidArgument` for an empty or too long kind or a too large payload.
    public init(identifier: RestoreIdentifier, kind: String, payload: Data, createdAt: Date) throws(StoreError) {
        guard !kind.isEmpty, kind.count <= OutboxEvent.maximumKindLength else {
            throw .invalidArgument("event kind must be 1...\(OutboxEvent.maximumKindLength) characters")
        }
        guard payload.count <= OutboxEvent.maximumPayloadBytes else {
            throw .invalidArgument("event payload larger than \(OutboxEvent.maximumPayloadBytes) bytes")
        }
        self.identifier = identifier
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt.roundedToStoredPrecision
    }
}
