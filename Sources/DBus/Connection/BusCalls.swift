/// Messages to the bus itself (`org.freedesktop.DBus`).
enum BusCalls {
    static let name = "org.freedesktop.DBus"
    static let path = ObjectPath(trusted: "/org/freedesktop/DBus")

    /// A call to the bus with a trusted member and arguments.
    static func call(_ member: String, _ body: [DBusValue] = []) -> Message {
        var m = Message(kind: .methodCall, body: body)
        m.destination = name
        m.path = path
        m.interface = name
        m.member = member
        return m
    }

    static func addMatch(_ rule: String) -> Message { call("AddMatch", [.string(rule)]) }

    /// RemoveMatch without waiting for the reply.
    static func removeMatch(_ rule: String) -> Message {
        var m = call("RemoveMatch", [.string(rule)])
        m.noReplyExpected = true
        return m
    }

    /// The rule that tracks the owner of a well-known name.
    static func ownerRule(_ wellKnown: String) -> SignalMatch {
        SignalMatch(
            sender: name, interface: name, member: "NameOwnerChanged", path: path, arguments: [0: wellKnown])
    }
}
