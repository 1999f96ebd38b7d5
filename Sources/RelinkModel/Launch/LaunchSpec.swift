/// How relinkd starts an identifier's program when an event for it is
/// committed while no client of it is attached (docs/relaunch.md): the
/// D-Bus activatable name the bus starts, and which event kinds wake it.
///
/// The bus name is checked by the API layer against D-Bus's rule and the
/// bus's activatable names; the event kinds against the event list
/// (`RelinkAPI.EventKind`): the model keeps them as their wire names.
public struct LaunchSpec: Sendable, Hashable, Codable {
    /// The D-Bus well-known name the bus starts (`StartServiceByName`).
    public var busName: String
    /// The event kinds (wire names, such as `value-notified`) that wake the
    /// program, sorted; empty: every event delivered to the identifier.
    public var wakeOn: [String]
    /// A systemd unit (such as `relink-example-lock.service`) relinkd starts
    /// (on the system manager for root's identifiers, on the owner's own
    /// user manager for anyone else's) instead of asking the bus to
    /// start ``busName``; the program still owns ``busName`` when it runs
    /// (a `Type=dbus` unit's `BusName=`), which tells relinkd it already
    /// runs. Nil: D-Bus activation by ``busName``.
    public var systemdUnit: String?

    /// - Parameters:
    ///   - busName: an activatable well-known name (not a unique `:1.x` name).
    ///   - wakeOn: event kind names; duplicates are merged, empty means every event.
    ///   - systemdUnit: a systemd unit to start instead of activating `busName`.
    public init(busName: String, wakeOn: [String] = [], systemdUnit: String? = nil) {
        self.busName = busName
        self.wakeOn = Array(Set(wakeOn)).sorted()
        self.systemdUnit = systemdUnit
    }

    /// Whether an event of `kind` wakes the program.
    public func wakes(on kind: String) -> Bool { wakeOn.isEmpty || wakeOn.contains(kind) }
}

/// Why relinkd started a program (CoreBluetooth's
/// `UIApplicationLaunchOptionsBluetoothCentralsKey`): handed, in `Register`'s
/// restored state, to the clients that register after the start.
public struct LaunchReason: Sendable, Hashable {
    /// The bus name that was started.
    public var busName: String
    /// The identifiers whose events asked for the start, sorted.
    public var identifiers: [RestoreIdentifier]
    /// The kinds of the events that asked for it (wire names), sorted.
    public var events: [String]

    /// - Parameters: as the properties; both lists are sorted and de-duplicated.
    public init(busName: String, identifiers: [RestoreIdentifier], events: [String]) {
        self.busName = busName
        self.identifiers = Array(Set(identifiers)).sorted()
        self.events = Array(Set(events)).sorted()
    }
}
