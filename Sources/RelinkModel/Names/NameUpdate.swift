/// The payload of a `name-updated` event: which name changed, the name the
/// identifier should now show and why, and both names with when each was seen.
public struct NameUpdate: Sendable, Hashable, Codable {
    /// Which name changed, from what, to what.
    public var change: NameChange
    /// The name the identifier should now show, and why.
    public var resolved: ResolvedName?
    /// Both names with when each was seen.
    public var names: PeripheralNames

    /// True when the change altered the resolved name (a GAP-preferring
    /// client may ignore an advertising rename that does not).
    public var changesResolvedName: Bool { resolved?.source == change.source }

    /// A name update.
    public init(change: NameChange, resolved: ResolvedName?, names: PeripheralNames) {
        self.change = change
        self.resolved = resolved
        self.names = names
    }
}

/// The resolved name and why it was chosen.
public struct ResolvedName: Sendable, Hashable, Codable {
    /// Why a name was chosen (its raw value is the wire's `reason`).
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The GAP name is known and preferred (CoreBluetooth's rule).
        case gapNameKnown
        /// GAP preferred but never read (never connected): advertising name.
        case noGAPNameYet
        /// The identifier prefers the advertising name and one was seen.
        case advertisingNamePreferred
        /// Advertising name preferred but none seen: GAP name.
        case noAdvertisingNameYet
    }

    /// The name.
    public var name: String
    /// Which of the two names it is.
    public var source: NameSource
    /// Why it was chosen.
    public var reason: Reason

    /// A resolved name.
    public init(name: String, source: NameSource, reason: Reason) {
        self.name = name
        self.source = source
        self.reason = reason
    }
}
