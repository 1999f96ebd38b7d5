public import Foundation

/// A database moved aside by `StoreOpenPolicy.quarantineAndStartEmpty`.
public struct QuarantinedFile: Hashable, Sendable {
    /// Why it was moved.
    public var reason: BadStateReason
    /// Where the database was.
    public var originalPath: String
    /// Where it is now (its `-wal` and `-shm`, if any, sit beside it with those suffixes).
    public var quarantinedPath: String
    /// When it was moved (the time in its new name).
    public var quarantinedAt: Date
}
