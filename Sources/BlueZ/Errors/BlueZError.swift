public import RelinkModel
/// An error returned by bluetoothd (or by the bus on its behalf), classified
/// for the reconnect policy, keeping the original D-Bus error name and
/// message so that they can be logged and reported unchanged.
///
/// The classes follow what BlueZ actually reports (see `bluez-facts.md`):
/// every asynchronous LE connect failure, a timeout included, comes back as
/// `org.bluez.Error.Failed` with "le-connection-abort-by-local", so such a
/// failure cannot be told from "out of range" and is `transient`; so is
/// bluetoothd absent or silent (``isServiceUnavailable``), retried like a
/// dropped link once it is back.
public struct BlueZError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.bluez.Error.Failed`.
    public let name: String
    /// The error message, e.g. `le-connection-abort-by-local`.
    public let message: String
    /// What a reconnect policy should make of it: the core's one class.
    public let failureClass: FailureClass

    public init(name: String, message: String) {
        self.name = name
        self.message = message
        self.failureClass = BlueZError.classify(name: name, message: message)
    }

    /// The name of relink's own timeout while waiting on bluetoothd.
    public static let timeoutName = RelinkErrorName.timeout.rawValue

    /// relink's own wait for `what` ran out.
    public static func timedOut(_ what: String) -> BlueZError {
        BlueZError(name: timeoutName, message: "timed out waiting for \(what)")
    }

    public var description: String { "\(name): \(message) [\(failureClass.rawValue)]" }

    /// The bus's names for "bluetoothd is not on the bus or did not answer".
    static let serviceUnavailableNames: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NoReply",
        "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut",
        "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.Disconnected",
    ]

    /// bluetoothd did not answer in time or is not on the bus (a
    /// ``FailureClass/transient`` failure): the layer resynchronises when
    /// it comes back.
    public var isServiceUnavailable: Bool { Self.serviceUnavailableNames.contains(name) }

    /// Classifies a D-Bus error by name and, for the catch-all
    /// `org.bluez.Error.Failed`, by message.
    public static func classify(name: String, message: String) -> FailureClass {
        switch name {
        case "org.bluez.Error.Failed", "org.bluez.Failed":
            return classifyFailed(message: message)
        case "org.bluez.Error.InProgress", "org.bluez.Error.Busy":
            return .inProgress
        case "org.bluez.Error.NotReady", "org.bluez.Error.NotPowered":
            return .notReady
        case "org.bluez.Error.NotConnected", "org.bluez.Error.AuthenticationTimeout",
             "org.bluez.Error.ConnectionAttemptFailed", "org.bluez.Error.AbortByLocal":
            return .transient
        case "org.freedesktop.DBus.Error.UnknownObject", "org.bluez.Error.DoesNotExist",
             "org.freedesktop.DBus.Error.UnknownInterface":
            return .deviceGone
        case "org.bluez.Error.NotSupported", "org.bluez.Error.NotAvailable",
             "org.bluez.Error.InvalidArguments", "org.freedesktop.DBus.Error.UnknownMethod",
             "org.freedesktop.DBus.Error.InvalidArgs", "org.bluez.Error.InvalidValueLength",
             "org.bluez.Error.InvalidOffset":
            return .notSupported
        case "org.bluez.Error.NotPermitted", "org.bluez.Error.NotAuthorized",
             "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.AuthenticationRejected",
             "org.bluez.Error.AuthenticationCanceled", "org.freedesktop.DBus.Error.AccessDenied":
            return .notPermitted
        case BlueZError.timeoutName:
            return .timeout
        case _ where serviceUnavailableNames.contains(name):
            return .transient
        default:
            return .unknown
        }
    }

    /// Whether the peripheral refused the operation for want of an
    /// encrypted or authenticated link, which pairing can give: BlueZ's
    /// central (`src/gatt-client.c`, `create_gatt_dbus_error`) reports ATT
    /// 0x05 (Insufficient Authentication), 0x0F (Insufficient Encryption)
    /// and 0x0C (Insufficient Encryption Key Size) to its D-Bus client as
    /// `org.bluez.Error.NotPermitted` "Not paired" (5.50 to 5.8x); another
    /// path could name the bare code as `Failed` "Operation failed with
    /// ATT error: 0x05". ATT 0x08 (Insufficient Authorization,
    /// `NotAuthorized`) is the peripheral's own policy: pairing does not
    /// lift it, so it is not one of these.
    public var isInsufficientSecurity: Bool {
        switch name {
        case "org.bluez.Error.NotPermitted":
            return message.lowercased() == "not paired"
        case "org.bluez.Error.Failed":
            let m = message.lowercased()
            return ["0x05", "0x0c", "0x0f"].contains { m == "operation failed with att error: \($0)" }
        default:
            return false
        }
    }

    /// `org.bluez.Error.Failed` carries the reason in its message: the
    /// `le-connection-*` / `br-connection-*` strings of BlueZ's `error.h`,
    /// their older spelled-out forms, or errno strings.
    static func classifyFailed(message: String) -> FailureClass {
        let m = message.lowercased()
        switch m {
        case "operation already in progress", "in progress":
            return .inProgress
        case "le-connection-adapter-not-powered", "br-connection-adapter-not-powered",
             "resource not ready", "not powered":
            return .notReady
        case "le-connection-not-supported", "br-connection-not-supported",
             "br-connection-profile-unavailable", "le-connection-invalid-arguments",
             "br-connection-invalid-arguments":
            return .notSupported
        case "le-connection-key-missing", "br-connection-key-missing":
            return .notPermitted
        case "le-connection-abort-by-local", "le-connection-abort-by-remote",
             "le-connection-timeout", "le-connection-refused", "le-connection-busy",
             "le-connection-concurrent-connection-limit", "le-connection-link-layer-protocol-error",
             "le-connection-gatt-browsing", "le-connection-create-socket",
             "le-connection-bad-socket", "le-connection-memory-allocation",
             "br-connection-canceled", "br-connection-page-timeout", "br-connection-refused",
             "br-connection-aborted-by-remote", "br-connection-aborted-by-local",
             "br-connection-busy", "br-connection-create-socket", "br-connection-sdp-search",
             "software caused connection abort", "connection timed out", "host is down",
             "connection refused", "connection reset by peer", "not connected",
             "device or resource busy", "transport endpoint is not connected":
            return .transient
        case "le-connection-already-connected", "br-connection-already-connected":
            // Success in disguise; the caller checks Connected.
            return .inProgress
        default:
            if m.hasPrefix("le-connection-") || m.hasPrefix("br-connection-") { return .transient }
            return .unknown
        }
    }
}
