public import RelinkModel
/// Which name an identifier reads as "the" name of a peripheral.
public enum NamePreference: String, Sendable, Hashable, Codable {
    /// The GAP name once known, as CoreBluetooth's `peripheral.name` (default).
    case gapName
    /// The fresh advertising name, for clients that follow renames.
    case advertisingName
}

extension PeripheralNames {
    /// The resolved name, by this rule:
    /// * preference ``NamePreference/gapName`` (default): the GAP name once
    ///   known (it then stays "the" name even when the device advertises a new
    ///   one, as on iOS); before any connection, the advertising name;
    /// * preference ``NamePreference/advertisingName``: the advertising name
    ///   once seen; before that, the GAP name;
    /// * nil when neither name was ever seen (the caller shows the address).
    public func resolved(preferring preference: NamePreference = .gapName) -> ResolvedName? {
        switch preference {
        case .gapName:
            if let gap { return ResolvedName(name: gap.value, source: .gap, reason: .gapNameKnown) }
            if let advertising { return ResolvedName(name: advertising.value, source: .advertising, reason: .noGAPNameYet) }
        case .advertisingName:
            if let advertising { return ResolvedName(name: advertising.value, source: .advertising, reason: .advertisingNamePreferred) }
            if let gap { return ResolvedName(name: gap.value, source: .gap, reason: .noAdvertisingNameYet) }
        }
        return nil
    }

    /// The name-updated event payload for `change` as seen by an identifier
    /// with `preference`: which name changed, and the resolved name with why.
    public func update(for change: NameChange, preferring preference: NamePreference) -> NameUpdate {
        NameUpdate(change: change, resolved: resolved(preferring: preference), names: self)
    }
}
