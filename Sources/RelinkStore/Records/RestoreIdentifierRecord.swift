public import Foundation
public import RelinkModel

/// A restore identifier as stored: who owns it and its options.
public struct RestoreIdentifierRecord: Hashable, Sendable, Codable {
    /// Which of a peripheral's two names is "the" name for this identifier.
    public enum NamePreference: String, Hashable, Sendable, Codable, CaseIterable {
        /// The GAP Device Name once known, else the advertising name (CoreBluetooth's rule).
        case gap
        /// The most recent advertising name, else the GAP name.
        case advertising
    }

    /// The default bound of the event outbox, in events.
    public static let defaultOutboxLimit = 1000
    /// The largest outbox bound accepted.
    public static let maximumOutboxLimit = 100_000

    public var id: RestoreIdentifier
    /// Unix UID of the user that created the identifier; only that user (and root) may use it.
    public var ownerUID: UInt32
    public var namePreference: NamePreference
    /// How many undelivered events the outbox keeps; past it, the oldest are dropped and counted.
    public var outboxLimit: Int
    public var createdAt: Date

    /// - Throws: `StoreError.invalidArgument` when `outboxLimit` is outside 1...`maximumOutboxLimit`.
    public init(id: RestoreIdentifier, ownerUID: UInt32, namePreference: NamePreference = .gap,
                outboxLimit: Int = Self.defaultOutboxLimit, createdAt: Date) throws(StoreError) {
        guard (1...Self.maximumOutboxLimit).contains(outboxLimit) else {
            throw .invalidArgument("outbox limit must be 1...\(Self.maximumOutboxLimit), got \(outboxLimit)")
        }
        self.id = id
        self.ownerUID = ownerUID
        self.namePreference = namePreference
        self.outboxLimit = outboxLimit
        self.createdAt = createdAt.roundedToStoredPrecision
    }
}
