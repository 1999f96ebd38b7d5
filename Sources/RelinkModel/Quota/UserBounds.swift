/// One of the per-user bounds of relinkd's store (docs/api/errors.md#per-user-bounds):
/// what a non-root user may keep in relinkd at once.
public enum QuotaBound: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Restore identifiers the user owns.
    case identifiers
    /// Connection intents of the user's identifiers.
    case intents
    /// Subscriptions of the user's identifiers.
    case subscriptions
    /// Services the user's identifiers publish (peripheral role).
    case publishedServices = "published-services"
    /// Bytes of the user's transfers under way (their data is stored until they end).
    case transferBytes = "transfer-bytes"
    /// Stored events the user's identifiers may keep unacknowledged: the sum
    /// of their `EventLimit`s (each identifier drops its oldest past its
    /// own, docs/api/events.md#the-bound), so a user's stored events are
    /// bounded by count at `Register`, never by refusing an event.
    case storedEvents = "stored-events"

    /// The bound's name, as in the configuration file and `Status`.
    public var description: String { rawValue }
}

/// How much of each bound a user uses, or asks to add.
public struct QuotaUse: Sendable, Hashable, Codable {
    /// By bound; a bound that is missing is 0.
    public var amounts: [QuotaBound: Int64]

    /// A use of `amounts`.
    public init(_ amounts: [QuotaBound: Int64] = [:]) {
        self.amounts = amounts
    }

    /// The amount of `bound`.
    public subscript(bound: QuotaBound) -> Int64 {
        get { amounts[bound] ?? 0 }
        set { amounts[bound] = newValue }
    }
}

/// The per-user bounds relinkd applies to every user but root
/// (`/etc/relink/relinkd.conf`, docs/relinkd-conf.md). root is bounded
/// only by the disk.
public struct UserBounds: Sendable, Hashable, Codable {
    /// By bound.
    public var limits: [QuotaBound: Int64]

    /// Defaults a gateway can live with: room for a few dozen programs of a
    /// user, far below what fills a disk.
    public static let defaults = UserBounds(limits: [
        .identifiers: 64, .intents: 256, .subscriptions: 1024, .publishedServices: 64,
        .transferBytes: 64 * 1_048_576, .storedEvents: 64 * 1000,
    ])

    /// Bounds of `limits`; a bound that is missing takes its default.
    public init(limits: [QuotaBound: Int64]) {
        self.limits = limits
    }

    /// The limit of `bound`.
    public subscript(bound: QuotaBound) -> Int64 {
        limits[bound] ?? Self.defaults.limits[bound] ?? 0
    }

    /// The first bound that `use` plus `adding` would pass for the user
    /// `uid`, or nil when it fits (always for root, UID 0). Only the bounds
    /// `adding` grows are checked: a user over a bound lowered since may
    /// still remove, acknowledge and change what does not grow.
    public func exceeded(by adding: QuotaUse, use: QuotaUse, uid: UInt32) -> QuotaBound? {
        guard uid != 0 else { return nil }
        return QuotaBound.allCases.first { bound in
            adding[bound] > 0 && use[bound] + adding[bound] > self[bound]
        }
    }
}
