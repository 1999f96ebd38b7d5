/// A named, typed argument of a method or signal.
public struct DBusArgument: Sendable, Hashable {
    /// The name shown in introspection data (may be empty).
    public var name: String
    /// The argument's complete D-Bus type.
    public var type: DBusType
    /// An argument such as `DBusArgument("options", .dictionary(key: .string, value: .variant))`.
    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// A method of an exported interface.
///
/// The connection checks the call's signature against `inArguments` before
/// the handler runs (a mismatch is replied as `InvalidArgs`), and the
/// handler's result against `outArguments` (a mismatch is replied as
/// `Failed` and is a bug in the handler).
public struct DBusMethod: Sendable {
    /// Answers one call: returns the reply's arguments, or throws to reply
    /// with an error (a ``DBusErrorConvertible`` as its D-Bus error, any
    /// other error as `Failed`).
    public typealias Handler = @Sendable (MethodCall) async throws -> [DBusValue]
    /// The member name, e.g. `Connect`.
    public var name: String
    /// The arguments a call must carry, in order (checked before `handler` runs).
    public var inArguments: [DBusArgument]
    /// The arguments the reply carries, in order (checked after `handler` returns).
    public var outArguments: [DBusArgument]
    /// The code that answers a call.
    public var handler: Handler
    /// Answers a call at once, on the connection's serve loop, in bus order
    /// (``Connection/serve(handlersOnIOThread:)``); must neither block nor
    /// compute for long. Nil for an ordinary (concurrent) method.
    public typealias InlineHandler = @Sendable (MethodCall) throws -> [DBusValue]
    /// The inline handler of a method made with ``inline(_:in:out:_:)``.
    public var inlineHandler: InlineHandler?
    /// Whether the handler holds its caller's turn (``MethodCall/endTurn()``):
    /// the same sender's later calls, of any method or property of the
    /// connection, are dispatched only once this handler returned or ended
    /// its turn. For a method whose effect must be applied in the order the
    /// caller sent its calls: the handler hands its work to a serial queue
    /// and then ends its turn. False: the turn ends as the handler starts,
    /// and calls run concurrently.
    public var ordered = false

    /// A method with its signature and handler; names and types are checked
    /// when the interface is exported (``DBusInterface/validate()``).
    public init(_ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [], ordered: Bool = false,
                handler: @escaping Handler) {
        self.name = name
        self.inArguments = inArguments
        self.outArguments = outArguments
        self.ordered = ordered
        self.handler = handler
    }

    /// A method answered inline: on the serve loop, in the order the calls
    /// arrived, with no task per call. For a stream of small calls whose
    /// order matters (a write without response). It bypasses the
    /// connection's object filter (``Connection/setObjectFilter(_:)``): the
    /// handler checks its caller itself and throws, e.g. `UnknownObject`,
    /// for one that may not call it.
    ///
    /// A static function, not an initializer: an initializer taking a
    /// synchronous closure would win overload resolution over
    /// ``init(_:in:out:handler:)`` for every method written with a trailing
    /// synchronous closure (and called itself for ever from here).
    public static func inline(_ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
                              _ inline: @escaping InlineHandler) -> DBusMethod {
        var method = DBusMethod(name, in: inArguments, out: outArguments, handler: { call in try inline(call) })
        method.inlineHandler = inline
        return method
    }

    var inSignature: String { inArguments.map(\.type.signature).joined() }
    var outSignature: String { outArguments.map(\.type.signature).joined() }
}

/// A property of an exported interface. Values live in the
/// ``ExportedObject``; `org.freedesktop.DBus.Properties` serves them.
public struct DBusProperty: Sendable {
    /// Whether `Get`/`GetAll` and `Set` may reach the property (the
    /// introspection `access` attribute).
    public enum Access: String, Sendable {
        /// `Get` and `GetAll` only; `Set` replies `PropertyReadOnly`.
        case read
        /// `Set` only; `Get` replies `AccessDenied` and `GetAll` leaves it out.
        case write
        /// Both.
        case readwrite
        var readable: Bool { self != .write }
        var writable: Bool { self != .read }
    }

    /// Called on a remote `Set` after the type was checked and before the
    /// value is stored; throw to refuse (the error is replied).
    public typealias SetHandler = @Sendable (DBusValue, MethodCall) async throws -> Void

    /// The property name, e.g. `Powered`.
    public var name: String
    /// The type every value of the property has.
    public var type: DBusType
    /// Read-only, write-only or both, for remote callers.
    public var access: Access
    /// Whether changes are announced with `PropertiesChanged`.
    public var emitsChanged: Bool
    /// The value never changes while the object exists
    /// (`EmitsChangedSignal=const`); implies no `PropertiesChanged`.
    public var constant: Bool
    /// Checks (and may act on) a remote `Set`; nil takes any value of the type.
    public var onSet: SetHandler?
    /// Computes the value per call (e.g. per caller) instead of reading the
    /// stored one; `Get` and `GetAll` then answer asynchronously.
    public typealias Getter = @Sendable (MethodCall) async throws -> DBusValue
    /// The per-call value source; nil serves the value stored in the object.
    public var getter: Getter?

    /// A property with its type and access; `onSet` and `getter` are optional
    /// hooks. A `constant` property announces no change (and introspects as
    /// `EmitsChangedSignal=const`).
    public init(_ name: String, _ type: DBusType, access: Access = .read, emitsChanged: Bool = true, constant: Bool = false,
                onSet: SetHandler? = nil, getter: Getter? = nil) {
        self.name = name
        self.type = type
        self.access = access
        self.emitsChanged = emitsChanged && !constant
        self.constant = constant
        self.onSet = onSet
        self.getter = getter
    }
}

/// A signal of an exported interface (declared for introspection and
/// checked by ``ExportedObject/emit(_:in:_:)``).
public struct DBusSignal: Sendable, Hashable {
    /// The member name, e.g. `PropertiesChanged`.
    public var name: String
    /// The arguments each emission carries, in order.
    public var arguments: [DBusArgument]
    /// A signal with its arguments.
    public init(_ name: String, _ arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface implemented by an exported object.
public struct DBusInterface: Sendable {
    /// The interface name, e.g. `org.relink.Manager1`.
    public var name: String
    /// The methods callers may call.
    public var methods: [DBusMethod]
    /// The properties served through `org.freedesktop.DBus.Properties`.
    public var properties: [DBusProperty] { didSet { propertyIndex = Self.index(properties) } }
    /// The signals the object may emit (see ``ExportedObject/emit(_:in:_:destination:)``).
    public var signals: [DBusSignal]
    /// The error name replied to a call of one of these methods whose
    /// signature differs (`org.freedesktop.DBus.Error.InvalidArgs` when nil),
    /// for services that promise their own error names for bad arguments.
    public var invalidSignatureError: DBusError.Name?
    /// Each property's position in `properties`, by name: every value set
    /// is checked against its property (10,000 exported peripherals at
    /// start-up look up 150,000).
    private var propertyIndex: [String: Int]

    /// An interface from its members; checked by ``validate()`` when exported.
    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignal] = [],
                invalidSignatureError: DBusError.Name? = nil) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        self.invalidSignatureError = invalidSignatureError
        self.propertyIndex = Self.index(properties)
    }

    /// The first property of each name (as a linear search would find it).
    private static func index(_ properties: [DBusProperty]) -> [String: Int] {
        var index: [String: Int] = [:]
        for (i, p) in properties.enumerated() where index[p.name] == nil { index[p.name] = i }
        return index
    }

    /// Checks every name and type.
    /// - Throws: ``DBusError`` (`InvalidArgs`, `InvalidSignature`).
    public func validate() throws(DBusError) {
        try DBusNames.checkInterface(name)
        for m in methods {
            try DBusNames.checkMember(m.name)
            for a in m.inArguments + m.outArguments { try a.type.validate() }
        }
        for p in properties {
            try DBusNames.checkMember(p.name)
            try p.type.validate()
        }
        for s in signals {
            try DBusNames.checkMember(s.name)
            for a in s.arguments { try a.type.validate() }
        }
    }

    func property(_ name: String) -> DBusProperty? { propertyIndex[name].map { properties[$0] } }

    /// Where a property is in ``properties``.
    func position(ofProperty name: String) -> Int? { propertyIndex[name] }
}

/// A method call being handled: the message and who sent it.
public struct MethodCall: Sendable {
    /// The call as received.
    public let message: Message
    /// The connection the call arrived on (to emit signals or make calls).
    public let connection: Connection
    let afterReplyActions = AfterReplyActions()
    let turn: CallTurn?

    init(message: Message, connection: Connection, turn: CallTurn? = nil) {
        self.message = message
        self.connection = connection
        self.turn = turn
    }

    /// Lets the sender's next call be dispatched before this one is
    /// answered. For an ``DBusMethod/ordered`` method, once the call's
    /// effect is ordered (handed to a serial queue), and before the handler
    /// waits for something the same sender may have to send (an answer to
    /// a request this call made). Harmless to call more than once, or for
    /// a method that is not ordered.
    public func endTurn() { turn?.end() }

    /// The arguments.
    public var arguments: [DBusValue] { message.body }
    /// The caller's unique bus name.
    public var sender: String { message.sender ?? "" }
    /// The object path called.
    public var path: ObjectPath { message.path ?? .root }

    /// The caller's Unix user id, asked of the bus and cached per sender.
    /// - Throws: ``DBusError`` (`NameHasNoOwner` when the caller is gone,
    ///   `Disconnected`).
    public func callerUnixUser() async throws -> UInt32 {
        try await connection.unixUser(of: sender)
    }

    /// Decodes the arguments into Swift types.
    /// - Throws: ``DBusError`` (`InvalidArgs`).
    public func decode<each T: DBusDecodable>(_ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
        try decodeBody(message.body, repeat each types)
    }
}
