import DBus

/// A typed error of relinkd's D-Bus interfaces (`Manager1`, `Central1`,
/// `Control1`), replied as `org.relink.Error.*` (docs/api/errors.md).
public enum ControlError: Error, Sendable, Hashable, DBusErrorConvertible, CustomStringConvertible {
    /// A malformed argument (bad identifier, address, UUID, option key or type, over a limit).
    case invalidArguments(String)
    /// The restore identifier is not registered (or belongs to another user).
    case unknownIdentifier(String)
    /// No connection intent, subscription or peripheral matches.
    case unknownPeripheral(String)
    /// The caller's user may not do this.
    case notPermitted(String)
    /// The identifier already has this intent.
    case alreadyExists(String)
    /// Read or write on a peripheral with no link.
    case notConnected(String)
    /// The adapter is off or bluetoothd is absent.
    case notReady(String)
    /// BlueZ is busy with the same operation.
    case inProgress(String)
    /// BlueZ does not support the operation (e.g. writing a read-only characteristic).
    case notSupported(String)
    /// The store could not commit: nothing was acknowledged, nothing half-written.
    case storeFailed(String)
    /// Anything else; the message says what.
    case failed(String)

    public var name: String {
        switch self {
        case .invalidArguments: "org.relink.Error.InvalidArguments"
        case .unknownIdentifier: "org.relink.Error.UnknownIdentifier"
        case .unknownPeripheral: "org.relink.Error.UnknownPeripheral"
        case .notPermitted: "org.relink.Error.NotPermitted"
        case .alreadyExists: "org.relink.Error.AlreadyExists"
        case .notConnected: "org.relink.Error.NotConnected"
        case .notReady: "org.relink.Error.NotReady"
        case .inProgress: "org.relink.Error.InProgress"
        case .notSupported: "org.relink.Error.NotSupported"
        case .storeFailed: "org.relink.Error.StoreFailed"
        case .failed: "org.relink.Error.Failed"
        }
    }

    public var message: String {
        switch self {
        case .invalidArguments(let m), .unknownIdentifier(let m), .unknownPeripheral(let m), .notPermitted(let m),
             .alreadyExists(let m), .notConnected(let m), .notReady(let m), .inProgress(let m), .notSupported(let m),
             .storeFailed(let m), .failed(let m):
            m
        }
    }

    public var dbusError: DBusError { DBusError(DBusError.Name(name), message) }

    public var description: String { "\(name): \(message)" }
}
