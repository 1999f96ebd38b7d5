/// Whether relinkd's adapter can be used, as a program sees it: what
/// CoreBluetooth's `centralManagerDidUpdateState` tells (powered on, powered
/// off, unauthorized, unsupported), named for what relinkd can tell apart
/// on BlueZ. The raw values are the wire names (`Manager1.AdapterState`,
/// the `adapter-state` event, the store).
///
/// | state | BlueZ shows | CoreBluetooth |
/// |---|---|---|
/// | `poweredOn` | the adapter with `Powered=true` | `.poweredOn` |
/// | `poweredOff` | `Powered=false` (also while it is being powered on or off: `PowerState` `off-enabling`, and `off` after `on-disabling`) | `.poweredOff` |
/// | `blocked` | `Powered=false` with `PowerState` `off-blocked` (rfkill; BlueZ ≥ 5.64 only, older ones show `poweredOff`) | `.poweredOff` |
/// | `missing` | bluetoothd runs but has no such adapter (unplugged, never there, wrong name) | `.unsupported` |
/// | `bluetoothdMissing` | nobody owns `org.bluez` on the bus (bluetoothd stopped, crashed, not installed) | `.resetting` / `.unknown` |
/// | `notPermitted` | the bus refuses relinkd's calls to `org.bluez` (`AccessDenied`: D-Bus policy) | `.unauthorized` |
///
/// A change of `PowerState` alone (`on-disabling` while `Powered` is still
/// true, `off-enabling` while it is still false) is not a state of its
/// own: the state follows `Powered`, as relinkd's links do.
public enum AdapterState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The adapter is powered on: links can be made.
    case poweredOn
    /// The adapter is there but powered off.
    case poweredOff
    /// The adapter is off and blocked by rfkill (BlueZ `PowerState` `off-blocked`).
    case blocked
    /// bluetoothd runs, but it has no adapter of that name.
    case missing
    /// bluetoothd is not on the bus.
    case bluetoothdMissing
    /// The bus refuses relinkd's calls to bluetoothd (`AccessDenied`).
    case notPermitted

    /// Parses a wire name.
    /// - Throws: ``DomainError/invalidAdapterState(_:)`` for anything but the names above.
    public init(parsing text: String) throws(DomainError) {
        guard let state = AdapterState(rawValue: text) else { throw .invalidAdapterState(text) }
        self = state
    }
}

/// A role an adapter can take in LE links, as BlueZ's `Adapter1.Roles`
/// names it: whether relinkd's adapter can be a central, a peripheral, or
/// both at once. The raw values are BlueZ's (and the wire's) names.
public enum AdapterRole: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// It can be a central (scan and connect).
    case central
    /// It can be a peripheral (advertise and be connected).
    case peripheral
    /// It can be both at the same time.
    case centralPeripheral = "central-peripheral"

    /// In declaration order.
    public static func < (a: AdapterRole, b: AdapterRole) -> Bool {
        allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0
    }

    /// Parses a wire name.
    /// - Throws: ``DomainError/invalidAdapterRole(_:)`` for anything but the names above.
    public init(parsing text: String) throws(DomainError) {
        guard let role = AdapterRole(rawValue: text) else { throw .invalidAdapterRole(text) }
        self = role
    }

    /// The roles among BlueZ's `Roles` strings, once each, in declaration
    /// order; names this build does not know are left out (a newer BlueZ
    /// may add some).
    public static func parsing(_ names: [String]) -> [AdapterRole] {
        Set(names.compactMap(AdapterRole.init(rawValue:))).sorted()
    }
}

/// The adapter relinkd uses, as programs are told of it: its state and the
/// roles it supports (empty when it is not there or BlueZ does not say).
/// One value for `Manager1.AdapterState`/`AdapterRoles`, the
/// `adapter-state` event, `Register`'s restored state and the store.
public struct AdapterStatus: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Whether it can be used.
    public var state: AdapterState
    /// The roles it supports, once each, in ``AdapterRole`` order.
    public var roles: [AdapterRole]

    /// A status; `roles` are kept once each, sorted.
    public init(_ state: AdapterState, roles: [AdapterRole] = []) {
        self.state = state
        self.roles = Set(roles).sorted()
    }

    /// `poweredOn (central, peripheral)`.
    public var description: String {
        roles.isEmpty ? state.rawValue : "\(state.rawValue) (\(roles.map(\.rawValue).joined(separator: ", ")))"
    }
}
