/// A D-Bus error: a name such as `org.freedesktop.DBus.Error.ServiceUnknown`
/// and a human-readable message.
///
/// Every error this module throws is a `DBusError`: errors replied by a peer,
/// errors of the bus, and local ones (validation failures are
/// ``Name/invalidArgs`` or ``Name/invalidSignature``, timeouts are
/// ``Name/noReply``, a closed or lost connection is ``Name/disconnected``).
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A D-Bus error name.
    public struct Name: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The full name, e.g. `org.freedesktop.DBus.Error.Failed`.
        public let rawValue: String
        /// A name from its text, unchecked (an invalid name is replied as
        /// `Failed`; see ``Message/errorReply(to:_:)``).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The same as ``init(rawValue:)``, unlabelled: `Name("org.example.Error.Busy")`.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The full name.
        public var description: String { rawValue }

        static let prefix = "org.freedesktop.DBus.Error."
        /// A generic failure; the message says what.
        public static let failed = Name(prefix + "Failed")
        /// Memory or another resource ran out (libdbus could not build or
        /// queue a message, start a thread, or install its watches).
        public static let noMemory = Name(prefix + "NoMemory")
        /// The destination name is not owned and the bus could not start a
        /// service for it.
        public static let serviceUnknown = Name(prefix + "ServiceUnknown")
        /// The name asked about (owner, Unix user) is not owned by anyone.
        public static let nameHasNoOwner = Name(prefix + "NameHasNoOwner")
        /// No reply arrived: the peer vanished or the call timed out.
        public static let noReply = Name(prefix + "NoReply")
        /// Reading or writing the bus socket failed (e.g. `poll` failed).
        public static let ioError = Name(prefix + "IOError")
        /// The bus address cannot be used (empty, malformed, or
        /// `DBUS_SESSION_BUS_ADDRESS` unset).
        public static let badAddress = Name(prefix + "BadAddress")
        /// The operation is not supported here, e.g. passing a Unix fd on a
        /// connection that cannot.
        public static let notSupported = Name(prefix + "NotSupported")
        /// A limit of the bus was hit (e.g. too many match rules for one
        /// connection).
        public static let limitsExceeded = Name(prefix + "LimitsExceeded")
        /// The bus policy or the peer refused the call.
        public static let accessDenied = Name(prefix + "AccessDenied")
        /// Authentication with the bus failed.
        public static let authFailed = Name(prefix + "AuthFailed")
        /// Nothing listens at the bus address.
        public static let noServer = Name(prefix + "NoServer")
        /// A timeout of the bus or of libdbus itself (see ``noReply`` for
        /// calls).
        public static let timeout = Name(prefix + "Timeout")
        /// No network for a TCP bus address.
        public static let noNetwork = Name(prefix + "NoNetwork")
        /// The address to listen on is taken.
        public static let addressInUse = Name(prefix + "AddressInUse")
        /// The connection is closed or was lost; pending calls and signal
        /// streams end with it.
        public static let disconnected = Name(prefix + "Disconnected")
        /// Invalid arguments: a name, path, value or signature that breaks a
        /// D-Bus rule, or a call whose arguments a handler did not accept.
        public static let invalidArgs = Name(prefix + "InvalidArgs")
        /// The socket file of a `unix:path=` address does not exist.
        public static let fileNotFound = Name(prefix + "FileNotFound")
        /// The object has no such method (or no such interface member).
        public static let unknownMethod = Name(prefix + "UnknownMethod")
        /// No object is exported at the path (or the object filter hides it
        /// from the caller).
        public static let unknownObject = Name(prefix + "UnknownObject")
        /// The object does not implement the interface.
        public static let unknownInterface = Name(prefix + "UnknownInterface")
        /// The interface has no such property.
        public static let unknownProperty = Name(prefix + "UnknownProperty")
        /// A `Set` on a property that cannot be written.
        public static let propertyReadOnly = Name(prefix + "PropertyReadOnly")
        /// An operation of the bus timed out (e.g. starting a service).
        public static let timedOut = Name(prefix + "TimedOut")
        /// A match rule that the bus (or ``SignalMatch/validate()``) rejects.
        public static let matchRuleInvalid = Name(prefix + "MatchRuleInvalid")
        /// `RemoveMatch` for a rule that was never added.
        public static let matchRuleNotFound = Name(prefix + "MatchRuleNotFound")
        /// A signature that breaks a D-Bus rule (unknown code, bad nesting,
        /// too long).
        public static let invalidSignature = Name(prefix + "InvalidSignature")
        /// The bus does not know the process id of a connection.
        public static let unixProcessIdUnknown = Name(prefix + "UnixProcessIdUnknown")
        /// A message whose header and body disagree.
        public static let inconsistentMessage = Name(prefix + "InconsistentMessage")
    }

    /// The D-Bus error name, e.g. ``Name/serviceUnknown``.
    public var name: Name
    /// A human-readable explanation (the error reply's string argument).
    public var message: String

    /// An error with a name and an explanation, e.g.
    /// `DBusError(.invalidArgs, "no such adapter")`.
    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`, as logged.
    public var description: String { "\(name.rawValue): \(message)" }
}

/// A Swift error that a method handler can throw to reply with a specific
/// D-Bus error. ``DBusError`` itself conforms. Any other error is replied as
/// `org.freedesktop.DBus.Error.Failed` with its description.
public protocol DBusErrorConvertible: Error {
    /// The D-Bus error to reply with.
    var dbusError: DBusError { get }
}

extension DBusError: DBusErrorConvertible {
    /// The error itself.
    public var dbusError: DBusError { self }
}
