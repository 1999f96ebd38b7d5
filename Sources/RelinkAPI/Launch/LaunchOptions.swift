import Foundation
public import DBus
public import RelinkModel

/// The wire form of a launch spec (`Manager1.SetLaunch`'s `spec`,
/// `Register`'s `launch` option) and of a launch reason (`Register`'s
/// restored `launch_reason`): one parser and one writer, for relinkd,
/// relinkctl and the client library (docs/relaunch.md).
public enum LaunchOptions {
    /// `bus_name` (s): the activatable name; `""` removes the spec.
    public static let busNameKey = "bus_name"
    /// `wake_on` (as): event kinds that wake the program; absent or empty: every event.
    public static let wakeOnKey = "wake_on"
    /// `systemd_unit` (s): a unit relinkd starts instead of activating
    /// `bus_name` (root's on the system manager, another user's on their
    /// own user manager); absent or `""`: none.
    public static let systemdUnitKey = "systemd_unit"
    /// The keys a spec takes, with their types.
    public static let keys: [String: DBusType] = [busNameKey: .string, wakeOnKey: .array(.string), systemdUnitKey: .string]

    /// The spec in `options` (already checked against ``keys``); nil when
    /// `bus_name` is `""` (remove the spec).
    /// - Throws: `InvalidArguments` for a missing or
    ///   malformed bus name (a unique `:1.x` name included) or an unknown
    ///   event kind.
    public static func spec(in options: [String: DBusValue]) throws(RelinkError) -> LaunchSpec? {
        guard case .string(let name)? = options[busNameKey] else { throw RelinkError(.invalidArguments, "the launch spec needs \(busNameKey) (s)") }
        var kinds: [String] = []
        if case .array(_, let items)? = options[wakeOnKey] {
            for case .string(let kind) in items {
                guard EventKind(rawValue: kind) != nil else {
                    throw RelinkError(.invalidArguments, "unknown event kind \(DomainError.echo(kind)) in \(wakeOnKey) (known: \(EventKind.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                kinds.append(kind)
            }
        }
        if name.isEmpty { return nil }
        guard !name.hasPrefix(":"), DBusNames.isValidBusName(name) else {
            throw RelinkError(.invalidArguments, "bus_name \(DomainError.echo(name)) is not a well-known D-Bus name")
        }
        var unit: String?
        if case .string(let u)? = options[systemdUnitKey], !u.isEmpty {
            guard isUnitName(u) else {
                throw RelinkError(.invalidArguments, "systemd_unit \(DomainError.echo(u)) is not a service unit name (NAME.service)")
            }
            unit = u
        }
        return LaunchSpec(busName: name, wakeOn: kinds, systemdUnit: unit)
    }

    /// Whether `name` is a systemd service unit name: at most 255 characters
    /// of `[A-Za-z0-9:_.\\@-]`, ending in `.service`, with a name before it.
    public static func isUnitName(_ name: String) -> Bool {
        name.count <= 255 && name.hasSuffix(".service") && name.count > ".service".count
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ":_.\\@-".unicodeScalars.contains($0)) }
    }

    /// A spec as `SetLaunch` takes it (nil: the removal, `bus_name` `""`).
    public static func value(_ spec: LaunchSpec?) -> DBusValue {
        var values: [String: DBusValue] = [busNameKey: .string(spec?.busName ?? ""), wakeOnKey: .array(.string, (spec?.wakeOn ?? []).map { .string($0) })]
        if let unit = spec?.systemdUnit { values[systemdUnitKey] = .string(unit) }
        return dictionary(values)
    }

    /// `launch_reason` in `Register`'s restored state: `bus_name` s,
    /// `identifiers` as, `events` as (kinds).
    public static func reasonValue(_ reason: LaunchReason) -> DBusValue {
        dictionary([busNameKey: .string(reason.busName), "identifiers": .array(.string, reason.identifiers.map { .string($0.rawValue) }),
                    "events": .array(.string, reason.events.map { .string($0) })])
    }

    /// The launch reason in a restored state's `launch_reason` value; nil when malformed.
    public static func reason(in value: DBusValue) -> LaunchReason? {
        guard case .dictionary(_, _, let entries) = value else { return nil }
        var fields: [String: DBusValue] = [:]
        for entry in entries { if case .string(let key) = entry.key, case .variant(let v) = entry.value { fields[key] = v } }
        guard case .string(let name)? = fields[busNameKey] else { return nil }
        func strings(_ key: String) -> [String] {
            guard case .array(_, let items)? = fields[key] else { return [] }
            return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        }
        return LaunchReason(busName: name, identifiers: strings("identifiers").compactMap { try? RestoreIdentifier($0) }, events: strings("events"))
    }

    private static func dictionary(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(key: .string, value: .variant, values.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value)) })
    }
}
