public import RelinkAPI
import DBus

/// An error of the client library: the `org.relink.Error.*` name relinkd
/// replied (or that the library gives to a bad argument it caught before
/// sending), or a D-Bus name when relinkd could not be reached.
///
/// ``name`` is the D-Bus error name, ``message`` one human-readable
/// sentence. ``isUnreachable`` tells "relinkd is not there" (no bus, name
/// not owned, no reply, connection lost) from an answer of relinkd.
public struct RelinkClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A D-Bus error name such as `org.relink.Error.UnknownIdentifier`.
    public struct Name: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The full name, e.g. `org.relink.Error.NotConnected`.
        public let rawValue: String
        /// A name from its text, unchecked.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The same as ``init(rawValue:)``, unlabelled.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The full name.
        public var description: String { rawValue }

        /// The name of a relinkd method error.
        public init(_ code: RelinkError.Code) { self.rawValue = code.dbusName }

        /// A malformed argument (bad UUID, address, identifier, option, size).
        public static let invalidArguments = Name(.invalidArguments)
        /// The identifier does not exist (or belongs to another user).
        public static let unknownIdentifier = Name(.unknownIdentifier)
        /// The peripheral UUID is not known to relinkd.
        public static let unknownPeripheral = Name(.unknownPeripheral)
        /// The characteristic is not on the peripheral (a typo in its UUID, most likely).
        public static let unknownCharacteristic = Name(.unknownCharacteristic)
        /// The caller may not do this (e.g. register another user's identifier).
        public static let notPermitted = Name(.notPermitted)
        /// The intent or subscription exists already.
        public static let alreadyExists = Name(.alreadyExists)
        /// Read or write on a peripheral with no link.
        public static let notConnected = Name(.notConnected)
        /// Adapter off or bluetoothd absent.
        public static let notReady = Name(.notReady)
        /// The same operation is already running.
        public static let inProgress = Name(.inProgress)
        /// The peripheral or BlueZ does not support it.
        public static let notSupported = Name(.notSupported)
        /// The store could not commit: nothing was acknowledged.
        public static let storeFailed = Name(.storeFailed)
        /// Anything else; the message says what.
        public static let failed = Name(.failed)
        /// The characteristic has no descriptor of that UUID.
        public static let unknownDescriptor = Name(.unknownDescriptor)
        /// The link is up but its services are not resolved yet.
        public static let servicesNotResolved = Name(.servicesNotResolved)
        /// `org.relink.Error.UnknownRequest`: the peripheral role has no such request waiting.
        public static let unknownRequest = Name(.unknownRequest)
        /// `org.relink.Error.UpdateQueueFull`: the peripheral role's update queue is full.
        public static let updateQueueFull = Name(.updateQueueFull)
        /// `org.relink.Error.NotActivatable`: the bus cannot start the launch spec's bus name.
        public static let notActivatable = Name(.notActivatable)
        /// The value is longer than the largest the link takes for its write type.
        public static let valueTooLong = Name(.valueTooLong)
        /// A write stream refused a write without response: it does not fit
        /// now; `ReadyToWrite` follows (``RelinkWriteStream/waitUntilReady()``).
        public static let writeQueueFull = Name(.writeQueueFull)
    }

    /// The D-Bus error name (relinkd's `org.relink.Error.*`, or the bus's).
    public var name: Name
    /// One human-readable sentence saying what went wrong.
    public var message: String

    /// An error with a name and its sentence.
    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`, as relinkctl prints it.
    public var description: String { "\(name.rawValue): \(message)" }

    /// The relinkd method error this is, nil for a D-Bus error of the bus.
    public var code: RelinkError.Code? { RelinkError.Code(dbusName: name.rawValue) }

    /// D-Bus errors meaning relinkd could not be reached at all.
    static let unreachableNames: Set<String> = [
        DBusError.Name.serviceUnknown, .nameHasNoOwner, .noReply, .disconnected, .noServer, .fileNotFound,
        .badAddress, .authFailed, .ioError, .timeout, .timedOut, .noNetwork, .limitsExceeded, .accessDenied,
    ].reduce(into: Set<String>()) { $0.insert($1.rawValue) }

    /// True when relinkd could not be reached (no bus, `org.relink` not
    /// owned, no reply in time, connection lost), as opposed to an error
    /// relinkd replied.
    public var isUnreachable: Bool {
        Self.unreachableNames.contains(name.rawValue) || name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    /// True for `UnknownIdentifier`, `UnknownPeripheral`, `UnknownCharacteristic` and `UnknownDescriptor`.
    public var isUnknownObject: Bool {
        name == .unknownIdentifier || name == .unknownPeripheral || name == .unknownCharacteristic || name == .unknownDescriptor
    }

    /// The error for an identifier relinkd does not have (or does not show
    /// the caller): one wording for every call, whichever object answered.
    public static func unknownIdentifier(_ identifier: String) -> RelinkClientError {
        .init(.unknownIdentifier, RelinkError.unknownIdentifier(named: identifier).message)
    }

    /// A local argument error.
    static func invalid(_ message: String) -> RelinkClientError { .init(.invalidArguments, message) }

    /// A reply of relinkd the library cannot read.
    static func badReply(_ what: String, _ detail: some CustomStringConvertible) -> RelinkClientError {
        .init(.failed, "relinkd's reply to \(what) could not be read (\(detail)).")
    }

    /// Maps an error thrown by the D-Bus binding. `unknownObject` is the
    /// relink error to use when the bus says the object does not exist.
    static func from(_ error: any Error, unknownObject: Name = .unknownIdentifier) -> RelinkClientError {
        if let e = error as? RelinkClientError { return e }
        if let e = error as? DBusError {
            if e.name == .unknownObject { return .init(unknownObject, e.message) }
            return .init(Name(e.name.rawValue), e.message)
        }
        if error is CancellationError { return .init(.failed, "The operation was cancelled.") }
        return .init(.failed, "\(error)")
    }
}
