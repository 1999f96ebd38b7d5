/// A D-Bus activation file (`NAME.service` in a bus's service directory):
/// the keys of its `[D-BUS Service]` group that relinkd reads.
public struct DBusActivationFile: Sendable, Hashable {
    /// `Name=`: the well-known name the bus starts it for.
    public var name: String
    /// `Exec=`: what the bus runs (absent when only `SystemdService=` is given).
    public var exec: String?
    /// `User=`: the user the system bus runs it as (the session bus ignores it).
    public var user: String?
    /// `SystemdService=`: the unit the bus hands the start to on a systemd machine.
    public var systemdService: String?

    /// Parses the file's text; nil when it has no `[D-BUS Service]` group
    /// with a `Name=` (as the bus, which ignores such a file).
    public init?(parsing text: String) {
        var group = "", values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = Substring(Self.trimmed(raw))
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") { group = String(line.dropFirst().dropLast()); continue }
            guard group == "D-BUS Service", let equals = line.firstIndex(of: "=") else { continue }
            let key = Self.trimmed(line[..<equals])
            if values[key] == nil { values[key] = Self.trimmed(line[line.index(after: equals)...]) }
        }
        guard let name = values["Name"], !name.isEmpty else { return nil }
        self.name = name
        exec = values["Exec"]
        user = values["User"]
        systemdService = values["SystemdService"]
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

/// Who may have relinkd start a program (docs/relaunch.md#permissions):
/// relinkd runs as root or its own user and must not start, for a user,
/// a program that user could not start.
///
/// The rule, enforced when a launch spec is set (and again before each
/// start, since files change):
/// * root may name any activatable name;
/// * any other user may name an activatable name only when its activation
///   file in the bus's service directories says `User=` that user (the
///   system bus runs it as that user, so relinkd starts nothing the user
///   could not run). A file without `User=` (run as the bus's own user) or
///   with another user's, or a name whose file relinkd cannot find, is
///   refused with `NotPermitted`.
///
/// A spec's systemd unit needs no decision here: root's is started on the
/// system manager; any other user's on that user's own manager, by
/// `systemctl --user` run *as that user* (docs/relaunch.md#systemd), so a
/// user can only ever start a unit of their own manager.
///
/// Pure: the daemon finds the file and the user's name.
public enum LaunchPermission: Sendable, Hashable {
    /// Allowed.
    case allowed
    /// Refused; the text says why (shown to the caller).
    case refused(String)

    /// The decision for the user `uid` (named `userName`, nil when the
    /// system has no name for it) naming `busName`, whose activation file
    /// is `file` (nil when none was found in the service directories).
    public static func decide(busName: String, uid: UInt32, userName: String?, file: DBusActivationFile?) -> LaunchPermission {
        if uid == 0 { return .allowed }
        guard let file else {
            return .refused("no activation file for \(busName) in the bus's service directories: relinkd cannot tell which user it runs as")
        }
        guard let user = file.user else {
            return .refused("\(busName) runs as the bus's own user (its activation file has no User=): only root may have relinkd start it")
        }
        guard let userName, user == userName || user == String(uid) else {
            return .refused("\(busName) runs as user \(user), not as the caller (uid \(uid)): only that user or root may have relinkd start it")
        }
        return .allowed
    }
}
