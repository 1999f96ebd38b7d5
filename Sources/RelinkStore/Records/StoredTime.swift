public import Foundation

/// Timestamps are stored as INTEGER milliseconds since the Unix epoch (UTC).
/// Records round their dates to whole milliseconds when built, so a record
/// read back compares equal to the one written.
extension Date {
    /// Milliseconds since 1970, rounded to the nearest millisecond.
    var storedMilliseconds: Int64 { unixMilliseconds }

    /// The date rounded to whole milliseconds, as it will be read back.
    public var roundedToStoredPrecision: Date { Date(storedMilliseconds: storedMilliseconds) }

    init(storedMilliseconds ms: Int64) { self.init(unixMilliseconds: ms) }
}

extension Duration {
    /// Whole milliseconds, rounded down, at least 1.
    var storedMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
