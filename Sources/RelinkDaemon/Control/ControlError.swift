import DBus

/// A typed error of the control interface, replied as `org.relink.Error.*`.
public enum ControlError: Error, Sendable, Hashable, DBusErrorConvertible, CustomStringConvertible {
    /// A malformed argument (bad identifier, address, UUID, option key or type).
    case invalidArguments(String)
    /// The restore identifier is not registered.
    case unknownIdentifier(String)
    /// No connection intent or peripheral matches.
    case unknownPeripheral(String)
    /// The identifier already has this intent.
    case alreadyExists(String)
    /// The store or BlueZ failed; nothing was acknowledged.
    case failed(String)

    public var name: String {
        switch self {
        case .invalidArguments: "org.relink.Error.InvalidArguments"
        case .unknownIdentifier: "org.relink.Error.UnknownIdentifier"
        case .unknownPeripheral: "org.relink.Error.UnknownPeripheral"
        case .alreadyExists: "org.relink.Error.AlreadyExists"
        case .failed: "org.relink.Error.Failed"
        }
    }

    public var message: String {
        switch self {
        case .invalidArguments(let m), .unknownIdentifier(let m), .unknownPeripheral(let m), .alreadyExists(let m), .failed(let m): m
        }
    }

    public var dbusError: DBusError { DBusError(DBusError.Name(name), message) }

    public var description: String { "\(name): \(message)" }
}
