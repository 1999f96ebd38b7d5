/// A D-Bus message as plain Swift values: no libdbus pointer escapes the
/// connection's I/O thread.
public struct Message: Sendable {
    /// The four D-Bus message types.
    public enum Kind: Sendable, Hashable {
        /// A call of a method; may expect a reply.
        case methodCall
        /// A successful reply to a call.
        case methodReturn
        /// An error reply to a call (see ``Message/errorName`` and ``Message/error``).
        case error
        /// A signal, broadcast or to one destination.
        case signal
    }

    /// Whether this is a call, a reply, an error reply or a signal.
    public var kind: Kind
    /// Set by the connection when sent; the peer's serial when received.
    public internal(set) var serial: UInt32 = 0
    /// For replies: the serial of the call answered.
    public var replySerial: UInt32?
    /// Calls and signals: the object called or emitting.
    public var path: ObjectPath?
    /// Calls and signals: the interface of `member` (optional for calls).
    public var interface: String?
    /// Calls and signals: the method or signal name.
    public var member: String?
    /// For errors: the D-Bus error name.
    public var errorName: String?
    /// The bus name the message is for; nil for a broadcast signal (and
    /// for a call on a peer-to-peer connection).
    public var destination: String?
    /// The unique name of the sender (filled in by the bus).
    public internal(set) var sender: String?
    /// Method calls only: the caller does not want a reply.
    public var noReplyExpected = false
    /// Method calls only: the bus may start the destination service.
    public var autoStart = true
    /// The arguments.
    public var body: [DBusValue]

    init(kind: Kind, body: [DBusValue] = []) {
        self.kind = kind
        self.body = body
    }

    /// A method call.
    /// - Throws: ``DBusError`` (`invalidArgs`) for an invalid destination,
    ///   interface or member name, or an argument that does not validate.
    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String, body: [DBusValue] = []
    ) throws(DBusError) -> Message {
        var m = Message(kind: .methodCall, body: body)
        if let destination { try DBusNames.checkBusName(destination) }
        if let interface { try DBusNames.checkInterface(interface) }
        try DBusNames.checkMember(member)
        m.destination = destination
        m.path = path
        m.interface = interface
        m.member = member
        try m.validateBody()
        return m
    }

    /// A signal.
    /// - Throws: ``DBusError`` (`invalidArgs`) for an invalid name or argument.
    public static func signal(
        path: ObjectPath, interface: String, member: String, body: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) -> Message {
        var m = Message(kind: .signal, body: body)
        try DBusNames.checkInterface(interface)
        try DBusNames.checkMember(member)
        if let destination { try DBusNames.checkBusName(destination) }
        m.path = path
        m.interface = interface
        m.member = member
        m.destination = destination
        try m.validateBody()
        return m
    }

    /// A successful reply to `call`.
    /// - Throws: ``DBusError`` (`invalidArgs`) for an argument that does not validate.
    public static func methodReturn(to call: Message, body: [DBusValue] = []) throws(DBusError) -> Message {
        var m = Message(kind: .methodReturn, body: body)
        m.replySerial = call.serial
        m.destination = call.sender
        try m.validateBody()
        return m
    }

    /// An error reply to `call`. An invalid error name is replaced by
    /// `org.freedesktop.DBus.Error.Failed` (so replying never fails).
    public static func errorReply(to call: Message, _ error: DBusError) -> Message {
        var m = Message(kind: .error)
        m.replySerial = call.serial
        m.destination = call.sender
        if DBusNames.isValidInterface(error.name.rawValue) {
            m.errorName = error.name.rawValue
            m.body = [.string(error.message.replacingNULs())]
        } else {
            m.errorName = DBusError.Name.failed.rawValue
            m.body = [.string("\(error.name.rawValue): \(error.message)".replacingNULs())]
        }
        return m
    }

    /// Checks every argument (see ``DBusValue/validate()``) and the length
    /// of the whole signature.
    /// - Throws: ``DBusError`` (`invalidArgs` or `invalidSignature`).
    public func validateBody() throws(DBusError) {
        for v in body { try v.validate() }
        _ = try Signature(types: body.map(\.type))
    }

    /// The signature of the body.
    public var signature: Signature {
        var s = ""
        for v in body { v.type.append(to: &s) }
        return Signature(trusted: s, types: body.map(\.type))
    }

    /// The error carried by an error message, else nil.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        let text = body.first.flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
        return DBusError(.init(errorName ?? DBusError.Name.failed.rawValue), text)
    }

    /// Decodes the body into Swift types, e.g.
    /// `let (name, props) = try msg.decode(String.self, [String: DBusValue].self)`.
    /// - Throws: ``DBusError`` (`invalidArgs`) when the count or a type differs.
    public func decode<each T: DBusDecodable>(_ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
        try decodeBody(body, repeat each types)
    }
}

extension String {
    func replacingNULs() -> String {
        utf8.contains(0) ? String(decoding: utf8.map { $0 == 0 ? 0x3F : $0 }, as: UTF8.self) : self
    }
}
