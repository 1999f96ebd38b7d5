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
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        static let prefix = "org.freedesktop.DBus.Error."
        public static let failed = Name(prefix + "Failed")
        public static let noMemory = Name(prefix + "NoMemory")
        public static let serviceUnknown = Name(prefix + "ServiceUnknown")
        public static let nameHasNoOwner = Name(prefix + "NameHasNoOwner")
        /// No reply arrived: the peer vanished or the call timed out.
        public static let noReply = Name(prefix + "NoReply")
        public static let ioError = Name(prefix + "IOError")
        public static let badAddress = Name(prefix + "BadAddress")
        public static let notSupported = Name(prefix + "NotSupported")
        public static let limitsExceeded = Name(prefix + "LimitsExceeded")
        public static let accessDenied = Name(prefix + "AccessDenied")
        public static let authFailed = Name(prefix + "AuthFailed")
        public static let noServer = Name(prefix + "NoServer")
        public static let timeout = Name(prefix + "Timeout")
        public static let noNetwork = Name(prefix + "NoNetwork")
        public static let addressInUse = Name(prefix + "AddressInUse")
        public static let disconnected = Name(prefix + "Disconnected")
        public static let invalidArgs = Name(prefix + "InvalidArgs")
        public static let fileNotFound = Name(prefix + "FileNotFound")
        public static let unknownMethod = Name(prefix + "UnknownMethod")
        public static let unknownObject = Name(prefix + "UnknownObject")
        public static let unknownInterface = Name(prefix + "UnknownInterface")
        public static let unknownProperty = Name(prefix + "UnknownProperty")
        public static let propertyReadOnly = Name(prefix + "PropertyReadOnly")
        public static let timedOut = Name(prefix + "TimedOut")
        public static let matchRuleInvalid = Name(prefix + "MatchRuleInvalid")
        public static let matchRuleNotFound = Name(prefix + "MatchRuleNotFound")
        public static let invalidSignature = Name(prefix + "InvalidSignature")
        public static let unixProcessIdUnknown = Name(prefix + "UnixProcessIdUnknown")
        public static let inconsistentMessage = Name(prefix + "InconsistentMessage")
    }

    public var name: Name
    public var message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

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
    public var dbusError: DBusError { self }
}
