#if canImport(FoundationEssentials)
public import struct FoundationEssentials.Date
#else
public import struct Foundation.Date
#endif

/// A name with the (wall-clock) time it was last seen.
public struct SeenName: Sendable, Hashable, Codable {
    public var value: String
    public var seenAt: Date

    public init(_ value: String, seenAt: Date) {
        self.value = value
        self.seenAt = seenAt
    }
}

/// Which of a peripheral's two names.
public enum NameSource: String, Sendable, Hashable, Codable {
    /// The Local Name in an advertisement or scan response.
    case advertising
    /// The Device Name characteristic (0x2A00) of the GAP service, read over a connection.
    case gap
}

/// A change of one of the two names (never raised for a name seen again unchanged).
public struct NameChange: Sendable, Hashable, Codable {
    public var source: NameSource
    public var previous: String?
    public var current: String

    public init(source: NameSource, previous: String?, current: String) {
        self.source = source
        self.previous = previous
        self.current = current
    }
}

/// Both names of one peripheral, each with when it was last seen.
///
/// The BlueZ layer feeds it: an advertising name is `Device1.Name` as seen
/// while discovering and not connected; a GAP name is 0x2A00 where BlueZ
/// exports it, else the `Name` change that follows `Connected=true`.
/// Seeing a name again refreshes its time and raises nothing; a different
/// value returns a ``NameChange``. Resolution is in ``resolved(preferring:)``.
public struct PeripheralNames: Sendable, Hashable, Codable {
    public private(set) var advertising: SeenName?
    public private(set) var gap: SeenName?

    public init(advertising: SeenName? = nil, gap: SeenName? = nil) {
        self.advertising = advertising
        self.gap = gap
    }

    /// Records an advertising name; returns the change when the value differs.
    public mutating func sawAdvertisingName(_ name: String, at time: Date) -> NameChange? {
        Self.record(name, at: time, in: &advertising, source: .advertising)
    }

    /// Records a GAP name; returns the change when the value differs.
    public mutating func sawGAPName(_ name: String, at time: Date) -> NameChange? {
        Self.record(name, at: time, in: &gap, source: .gap)
    }

    private static func record(_ name: String, at time: Date, in slot: inout SeenName?, source: NameSource) -> NameChange? {
        let previous = slot?.value
        slot = SeenName(name, seenAt: max(time, slot?.seenAt ?? time))
        return previous == name ? nil : NameChange(source: source, previous: previous, current: name)
    }
}
