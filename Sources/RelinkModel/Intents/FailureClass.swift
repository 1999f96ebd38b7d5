/// What kind of failure a BlueZ error (or a relink-side condition) is, which
/// decides what the connection state machine does next.
///
/// The one list of failure classes: the BlueZ layer classifies error names
/// into it (`BlueZError`, see bluez-facts.md); the core only sees the class
/// and keeps the original name and message for the journal.
///
/// | class | typical BlueZ error | the state machine |
/// |---|---|---|
/// | `transient` | `Failed` "le-connection-abort-by-local"; bluetoothd absent or silent (`ServiceUnknown`, `NoReply`, …) | next strategy; at round end the transient backoff list |
/// | `inProgress` | `InProgress`, `Failed` "Operation already in progress" | as transient |
/// | `notReady` | `NotReady`, adapter `Powered=false` | waits for the adapter-up input, no polling |
/// | `deviceGone` | `DBus.Error.UnknownObject`, `DoesNotExist` | skips to the scan strategy; at round end the device-missing backoff list |
/// | `notSupported` | `NotSupported` | fails at once |
/// | `notPermitted` | `NotPermitted`, `NotAuthorized`, `AuthenticationFailed` | fails at once |
/// | `timeout` | a relink step timer, D-Bus `NoReply` | as transient |
/// | `cancelled` | `Failed` "br-connection-canceled" not asked for by this intent | as transient |
/// | `unknown` | anything else | as transient |
public enum FailureClass: String, Sendable, Hashable, Codable, CaseIterable {
    /// Worth retrying soon: the link could not be made or was aborted (out
    /// of range, connect timeout, busy), or bluetoothd was away.
    case transient
    /// Another operation on the same object is still running.
    case inProgress
    /// The adapter is off or not ready: wait for it instead of polling.
    case notReady
    /// The device is not in bluetoothd's cache: a scan is needed to find it.
    case deviceGone
    /// The operation cannot work with this device or adapter.
    case notSupported
    /// Refused for lack of permission or authorisation (pairing, policy).
    case notPermitted
    /// relink's own wait ran out, or D-Bus gave no reply in time.
    case timeout
    /// A cancellation this intent did not ask for.
    case cancelled
    /// Anything else, kept with its original name and message.
    case unknown

    /// Failures that no retry can fix: the intent fails at once.
    public var isPermanent: Bool { self == .notSupported || self == .notPermitted }
}

/// A classified failure with the original error kept for the journal and for
/// the `failedToConnect` event.
public struct ConnectionFailure: Sendable, Hashable, Codable, CustomStringConvertible {
    public var failureClass: FailureClass
    /// The original error name, e.g. `org.bluez.Error.Failed`, or a relink
    /// name such as `org.relink.Error.Timeout` for conditions relink detects.
    public var errorName: String
    /// The original error message, e.g. `le-connection-abort-by-local`.
    public var message: String

    public init(_ failureClass: FailureClass, errorName: String, message: String = "") {
        self.failureClass = failureClass
        self.errorName = errorName
        self.message = message
    }

    public var description: String {
        message.isEmpty ? "\(failureClass.rawValue) (\(errorName))" : "\(failureClass.rawValue) (\(errorName): \(message))"
    }

    /// A relink step timer expired.
    public static func stepTimeout(_ step: String) -> Self {
        .init(.timeout, errorName: RelinkErrorName.timeout.rawValue, message: "\(step) timed out")
    }

    /// The intent's overall deadline passed.
    public static let deadlineExpired = ConnectionFailure(.timeout, errorName: RelinkErrorName.timeout.rawValue, message: "overall deadline passed")

    /// A lookup or a scan did not find the device.
    public static func notFound(_ how: String) -> Self {
        .init(.deviceGone, errorName: RelinkErrorName.notFound.rawValue, message: how)
    }

    /// The intent was cancelled by its client.
    public static let cancelledByClient = ConnectionFailure(.cancelled, errorName: RelinkErrorName.cancelled.rawValue, message: "cancelled by client")

    /// bluetoothd went away (its bus name changed owner).
    public static let bluetoothdRestarted = ConnectionFailure(.transient, errorName: RelinkErrorName.bluetoothdRestarted.rawValue, message: "bluetoothd restarted")

    /// The adapter was powered off.
    public static let adapterOff = ConnectionFailure(.notReady, errorName: RelinkErrorName.adapterOff.rawValue, message: "adapter powered off")
}
