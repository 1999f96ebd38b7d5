public import DBus
public import RelinkModel

/// An error of relinkd's D-Bus methods (`Manager1`, `Central1`, `Control1`),
/// replied as `org.relink.Error.*` (docs/api/errors.md, each method's page
/// lists the ones it can give). relinkd throws it; the client library and
/// relinkctl read its ``Code`` back from the reply's name.
public enum RelinkError: Error, Sendable, Hashable, DBusErrorConvertible, CustomStringConvertible {
    /// A malformed argument (bad identifier, address, UUID, option key or type, over a limit).
    case invalidArguments(String)
    /// The restore identifier is not registered (or belongs to another user).
    case unknownIdentifier(String)
    /// No connection intent, subscription or peripheral matches.
    case unknownPeripheral(String)
    /// The characteristic is not on the peripheral: its GATT database is
    /// known (services resolved, the service's characteristics seen) and
    /// lacks it (`Subscribe`), or it is not on the link (`Read`, `Write`).
    case unknownCharacteristic(String)
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
    /// The characteristic is on the link and has no descriptor of that UUID.
    case unknownDescriptor(String)
    /// The link is up but its services are not resolved yet (`GattDatabase`).
    case servicesNotResolved(String)
    /// A write over the largest value for its write type (the message names it).
    case valueTooLong(String)
    /// A write without response that does not fit now; `ReadyToWrite` follows.
    case writeQueueFull(String)
    /// Peripheral role: no request of that number waits for an answer
    /// (never handed out, answered already, or timed out).
    case unknownRequest(String)
    /// Peripheral role: the update does not fit; a `ready-to-update` event
    /// follows when there is room.
    case updateQueueFull(String)
    /// Relaunch: the bus cannot start the bus name given (no activation file for it).
    case notActivatable(String)
    /// The identifier has no transfer of that identifier under way
    /// (never started, or ended: completed, failed, cancelled).
    case unknownTransfer(String)
    /// Pairing failed: authentication rejected, cancelled or timed out.
    case authenticationFailed(String)
    /// Peripheral role: the controller has no advertising instance left
    /// for `StartAdvertising`; nothing published changed.
    case advertisingLimitReached(String)
    /// The calling user is at one of their per-user bounds (the message
    /// names it, with its use and its bound); nothing changed.
    case quotaExceeded(String)

    /// The kind of a method error, without its message: one per D-Bus name.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// `org.relink.Error.InvalidArguments`.
        case invalidArguments
        /// `org.relink.Error.UnknownIdentifier`.
        case unknownIdentifier
        /// `org.relink.Error.UnknownPeripheral`.
        case unknownPeripheral
        /// `org.relink.Error.UnknownCharacteristic`.
        case unknownCharacteristic
        /// `org.relink.Error.NotPermitted`.
        case notPermitted
        /// `org.relink.Error.AlreadyExists`.
        case alreadyExists
        /// `org.relink.Error.NotConnected`.
        case notConnected
        /// `org.relink.Error.NotReady`.
        case notReady
        /// `org.relink.Error.InProgress`.
        case inProgress
        /// `org.relink.Error.NotSupported`.
        case notSupported
        /// `org.relink.Error.StoreFailed`.
        case storeFailed
        /// `org.relink.Error.Failed`.
        case failed
        /// `org.relink.Error.UnknownDescriptor`.
        case unknownDescriptor
        /// `org.relink.Error.ServicesNotResolved`.
        case servicesNotResolved
        /// `org.relink.Error.ValueTooLong`.
        case valueTooLong
        /// `org.relink.Error.WriteQueueFull`.
        case writeQueueFull
        /// `org.relink.Error.UnknownRequest`.
        case unknownRequest
        /// `org.relink.Error.UpdateQueueFull`.
        case updateQueueFull
        /// `org.relink.Error.NotActivatable`.
        case notActivatable
        /// `org.relink.Error.UnknownTransfer`.
        case unknownTransfer
        /// `org.relink.Error.AuthenticationFailed`.
        case authenticationFailed
        /// `org.relink.Error.AdvertisingLimitReached`.
        case advertisingLimitReached
        /// `org.relink.Error.QuotaExceeded`.
        case quotaExceeded

        /// The error's name in the shared list.
        public var errorName: RelinkErrorName {
            switch self {
            case .invalidArguments: .invalidArguments
            case .unknownIdentifier: .unknownIdentifier
            case .unknownPeripheral: .unknownPeripheral
            case .unknownCharacteristic: .unknownCharacteristic
            case .notPermitted: .notPermitted
            case .alreadyExists: .alreadyExists
            case .notConnected: .notConnected
            case .notReady: .notReady
            case .inProgress: .inProgress
            case .notSupported: .notSupported
            case .storeFailed: .storeFailed
            case .failed: .failed
            case .unknownDescriptor: .unknownDescriptor
            case .servicesNotResolved: .servicesNotResolved
            case .valueTooLong: .valueTooLong
            case .writeQueueFull: .writeQueueFull
            case .unknownRequest: .unknownRequest
            case .updateQueueFull: .updateQueueFull
            case .notActivatable: .notActivatable
            case .unknownTransfer: .unknownTransfer
            case .authenticationFailed: .authenticationFailed
            case .advertisingLimitReached: .advertisingLimitReached
            case .quotaExceeded: .quotaExceeded
            }
        }

        /// The D-Bus error name, e.g. `org.relink.Error.UnknownIdentifier`.
        public var dbusName: String { errorName.rawValue }

        /// The code of a D-Bus error name; nil for any other name.
        public init?(dbusName: String) {
            guard let code = Code.allCases.first(where: { $0.dbusName == dbusName }) else { return nil }
            self = code
        }
    }

    /// `UnknownIdentifier` for `identifier`, in the one wording relinkd and
    /// its clients use (a non-root caller cannot tell "not registered" from
    /// "another user's").
    public static func unknownIdentifier(named identifier: String) -> RelinkError {
        .unknownIdentifier("No restore identifier \(DomainError.echo(identifier)) is registered (or it belongs to another user).")
    }

    /// The error of `code` with `message`.
    public init(_ code: Code, _ message: String) {
        switch code {
        case .invalidArguments: self = .invalidArguments(message)
        case .unknownIdentifier: self = .unknownIdentifier(message)
        case .unknownPeripheral: self = .unknownPeripheral(message)
        case .unknownCharacteristic: self = .unknownCharacteristic(message)
        case .notPermitted: self = .notPermitted(message)
        case .alreadyExists: self = .alreadyExists(message)
        case .notConnected: self = .notConnected(message)
        case .notReady: self = .notReady(message)
        case .inProgress: self = .inProgress(message)
        case .notSupported: self = .notSupported(message)
        case .storeFailed: self = .storeFailed(message)
        case .failed: self = .failed(message)
        case .unknownDescriptor: self = .unknownDescriptor(message)
        case .servicesNotResolved: self = .servicesNotResolved(message)
        case .valueTooLong: self = .valueTooLong(message)
        case .writeQueueFull: self = .writeQueueFull(message)
        case .unknownRequest: self = .unknownRequest(message)
        case .updateQueueFull: self = .updateQueueFull(message)
        case .notActivatable: self = .notActivatable(message)
        case .unknownTransfer: self = .unknownTransfer(message)
        case .authenticationFailed: self = .authenticationFailed(message)
        case .advertisingLimitReached: self = .advertisingLimitReached(message)
        case .quotaExceeded: self = .quotaExceeded(message)
        }
    }

    /// The kind of this error.
    public var code: Code {
        switch self {
        case .invalidArguments: .invalidArguments
        case .unknownIdentifier: .unknownIdentifier
        case .unknownPeripheral: .unknownPeripheral
        case .unknownCharacteristic: .unknownCharacteristic
        case .notPermitted: .notPermitted
        case .alreadyExists: .alreadyExists
        case .notConnected: .notConnected
        case .notReady: .notReady
        case .inProgress: .inProgress
        case .notSupported: .notSupported
        case .storeFailed: .storeFailed
        case .failed: .failed
        case .unknownDescriptor: .unknownDescriptor
        case .servicesNotResolved: .servicesNotResolved
        case .valueTooLong: .valueTooLong
        case .writeQueueFull: .writeQueueFull
        case .unknownRequest: .unknownRequest
        case .updateQueueFull: .updateQueueFull
        case .notActivatable: .notActivatable
        case .unknownTransfer: .unknownTransfer
        case .authenticationFailed: .authenticationFailed
        case .advertisingLimitReached: .advertisingLimitReached
        case .quotaExceeded: .quotaExceeded
        }
    }

    /// The D-Bus error name.
    public var name: String { code.dbusName }

    /// One human-readable sentence.
    public var message: String {
        switch self {
        case .invalidArguments(let m), .unknownIdentifier(let m), .unknownPeripheral(let m), .unknownCharacteristic(let m), .notPermitted(let m),
             .alreadyExists(let m), .notConnected(let m), .notReady(let m), .inProgress(let m), .notSupported(let m),
             .storeFailed(let m), .failed(let m), .unknownDescriptor(let m), .servicesNotResolved(let m),
             .valueTooLong(let m), .writeQueueFull(let m), .unknownRequest(let m), .updateQueueFull(let m), .notActivatable(let m),
             .unknownTransfer(let m), .authenticationFailed(let m), .advertisingLimitReached(let m),
             .quotaExceeded(let m):
            m
        }
    }

    /// The reply D-Bus sends for it.
    public var dbusError: DBusError { DBusError(DBusError.Name(name), message) }

    /// `name: message`.
    public var description: String { "\(name): \(message)" }
}
