public import RelinkModel
/// Payload of a `nameUpdated` event.
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

    public init(change: NameChange, resolved: ResolvedName?, names: PeripheralNames) {
        self.change = change
        self.resolved = resolved
        self.names = names
    }
}
