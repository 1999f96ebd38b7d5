import RelinkAPI
public import RelinkModel
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

        /// The name of a relinkd error.
        public init(_ code: RelinkErrorName) { self.rawValue = code.rawValue }

        /// Whether the name is relinkd's error `code`: `error.name == .notConnected`.
        public static func == (name: Name, code: RelinkErrorName) -> Bool { name.rawValue == code.rawValue }
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

    /// relinkd's error `code` with its sentence.
    public init(_ code: RelinkErrorName, _ message: String) {
        self.init(Name(code), message)
    }

    /// `name: message`, as relinkctl prints it.
    public var description: String { "\(name.rawValue): \(message)" }

    /// The relinkd method error this is, nil for a D-Bus error of the bus.
    public var code: RelinkErrorName? { RelinkErrorName(methodErrorNamed: name.rawValue) }

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
        .init(Name(.unknownIdentifier), RelinkError.unknownIdentifier(named: identifier).message)
    }

    /// A local argument error.
    static func invalid(_ message: String) -> RelinkClientError { .init(.invalidArguments, message) }

    /// A reply of relinkd the library cannot read.
    static func badReply(_ what: String, _ detail: some CustomStringConvertible) -> RelinkClientError {
        .init(.failed, "relinkd's reply to \(what) could not be read (\(detail)).")
    }

    /// Maps an error thrown by the D-Bus binding. `unknownObject` is the
    /// relink error to use when the bus says the object does not exist.
    static func from(_ error: any Error, unknownObject: RelinkErrorName = .unknownIdentifier) -> RelinkClientError {
        if let e = error as? RelinkClientError { return e }
        if let e = error as? DBusError {
            if e.name == .unknownObject { return .init(unknownObject, e.message) }
            return .init(Name(e.name.rawValue), e.message)
        }
        if error is CancellationError { return .init(.failed, "The operation was cancelled.") }
        return .init(.failed, "\(error)")
    }
}

/// Whether an optional error name is relinkd's error `code`: `refusal?.name == .notConnected`.
public func == (name: RelinkClientError.Name?, code: RelinkErrorName) -> Bool { name?.rawValue == code.rawValue }
