public import Foundation

/// Timestamps are stored as INTEGER milliseconds since the Unix epoch (UTC).
/// Records round their dates to whole milliseconds when built, so a record
/// read back compares equal to the one written.
extension Date {
    /// Milliseconds since 1970, rounded to the nearest millisecond.
    var storedMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// The date rounded to whole milliseconds, as it will be read back.
    public var roundedToStoredPrecision: Date { Date(storedMilliseconds: storedMilliseconds) }

    init(storedMilliseconds ms: Int64) { self.init(timeIntervalSince1970: Double(ms) / 1000) }
}

extension Duration {
    /// Whole milliseconds, rounded down, at least 1.
    var storedMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
