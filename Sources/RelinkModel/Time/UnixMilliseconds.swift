#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Every time relink gives out or keeps (the event wire's `atMs` and
/// `seenAtMs`, `Status`'s times, the GATT database's `readAtMs`, the
/// store's columns) is whole milliseconds since 1970-01-01 00:00:00 UTC,
/// an integer: converted here, once.
extension Date {
    /// Milliseconds since 1970 (UTC), rounded to the nearest.
    public var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// The date `milliseconds` after 1970-01-01 00:00:00 UTC.
    public init(unixMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
