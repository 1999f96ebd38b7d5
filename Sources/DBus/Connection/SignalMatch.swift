/// A D-Bus match rule for signals, e.g.
/// `SignalMatch(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")`.
///
/// The rule is sent to the bus (`AddMatch`) and also applied locally, so a
/// subscription only sees the signals it asked for even when other rules
/// on the same connection bring in more. A well-known `sender` is tracked
/// through its current owner (as the bus does), so signals keep arriving
/// when the owning process restarts.
public struct SignalMatch: Hashable, Sendable, CustomStringConvertible {
    /// The sending bus name: a unique name, or a well-known name followed
    /// to its current owner.
    public var sender: String?
    /// The signal's interface.
    public var interface: String?
    /// The signal's name.
    public var member: String?
    /// The exact emitting object (not together with `pathNamespace`).
    public var path: ObjectPath?
    /// Matches `path` and every path below it.
    public var pathNamespace: ObjectPath?
    /// Only signals addressed to this bus name (unicast signals).
    public var destination: String?
    /// `argN='value'`: string arguments that must be equal.
    public var arguments: [Int: String]
    /// `arg0namespace`: the first argument is this bus name or below it.
    public var arg0Namespace: String?

    /// A rule; every field left nil matches anything. Checked by
    /// ``validate()`` when subscribed.
    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: ObjectPath? = nil,
        pathNamespace: ObjectPath? = nil, destination: String? = nil, arguments: [Int: String] = [:],
        arg0Namespace: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.arg0Namespace = arg0Namespace
    }

    /// The rule text sent to the bus.
    public var description: String {
        var parts = ["type='signal'"]
        func add(_ k: String, _ v: String?) { if let v { parts.append("\(k)='\(Self.escape(v))'") } }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination)
        for (i, v) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(i)", v) }
        add("arg0namespace", arg0Namespace)
        return parts.joined(separator: ",")
    }

    /// Quoting as the D-Bus specification defines it: `'` becomes `'\''`.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s { if c == "'" { out += "'\\''" } else { out.append(c) } }
        return out
    }

    /// Checks the names and argument indices before the rule reaches the bus.
    /// - Throws: ``DBusError`` (`matchRuleInvalid`).
    public func validate() throws(DBusError) {
        if let sender, !DBusNames.isValidBusName(sender) { throw DBusError(.matchRuleInvalid, "invalid sender '\(sender)'") }
        if let interface, !DBusNames.isValidInterface(interface) {
            throw DBusError(.matchRuleInvalid, "invalid interface '\(interface)'")
        }
        if let member, !DBusNames.isValidMember(member) { throw DBusError(.matchRuleInvalid, "invalid member '\(member)'") }
        if path != nil, pathNamespace != nil { throw DBusError(.matchRuleInvalid, "path and path_namespace together") }
        if let destination, !DBusNames.isValidBusName(destination) {
            throw DBusError(.matchRuleInvalid, "invalid destination '\(destination)'")
        }
        for (i, v) in arguments {
            guard (0...63).contains(i) else { throw DBusError(.matchRuleInvalid, "argument index \(i) out of 0...63") }
            if v.utf8.contains(0) { throw DBusError(.matchRuleInvalid, "NUL in arg\(i)") }
        }
        if let a = arg0Namespace, !DBusNames.isValidBusName(a), !DBusNames.isValidMember(a) {
            throw DBusError(.matchRuleInvalid, "invalid arg0namespace '\(a)'")
        }
    }

    /// Whether the sender is a well-known name whose owner must be tracked.
    var needsOwnerTracking: Bool {
        guard let sender else { return false }
        return !sender.hasPrefix(":") && sender != "org.freedesktop.DBus"
    }

    /// Local matching. `owner` is the current unique owner of a well-known
    /// `sender` (nil when it has none).
    func matches(_ m: Message, owner: String?) -> Bool {
        guard m.kind == .signal else { return false }
        if let sender {
            let expected = needsOwnerTracking ? owner : sender
            guard let expected, m.sender == expected else { return false }
        }
        if let interface, m.interface != interface { return false }
        if let member, m.member != member { return false }
        if let path, m.path != path { return false }
        if let pathNamespace {
            guard let p = m.path, p.isDescendant(of: pathNamespace) else { return false }
        }
        if let destination, m.destination != destination { return false }
        for (i, v) in arguments {
            guard i < m.body.count, case .string(let s) = m.body[i], s == v else { return false }
        }
        if let ns = arg0Namespace {
            guard let first = m.body.first, case .string(let s) = first,
                s == ns || s.hasPrefix(ns + ".")
            else { return false }
        }
        return true
    }
}
