extension ConnectionFailure {
    /// Classifies a D-Bus error from BlueZ by its name and message, per
    /// bluez-facts.md (BlueZ 5.66 and later). Pure, so the daemon can apply
    /// it to whatever error the BlueZ layer hands up.
    ///
    /// | error name | message | class |
    /// |---|---|---|
    /// | `org.bluez.Error.InProgress` | any | inProgress |
    /// | `org.bluez.Error.Failed` | "Operation already in progress" | inProgress |
    /// | `org.bluez.Error.Failed` | "br-connection-canceled" | cancelled |
    /// | `org.bluez.Error.Failed` | contains "timeout" / "timed out" | timeout |
    /// | `org.bluez.Error.Failed`, `org.bluez.Failed` | other ("le-connection-abort-by-local", "Software caused connection abort", ...) | transient |
    /// | `org.bluez.Error.NotReady` | any | notReady |
    /// | `org.freedesktop.DBus.Error.UnknownObject`, `org.freedesktop.DBus.Error.UnknownMethod`, `org.bluez.Error.DoesNotExist` | any | deviceGone |
    /// | `org.bluez.Error.NotSupported`, `org.bluez.Error.NotAvailable` | any | notSupported |
    /// | `org.bluez.Error.NotPermitted`, `org.bluez.Error.NotAuthorized`, `org.bluez.Error.AuthenticationFailed`, `org.bluez.Error.AuthenticationRejected`, `org.freedesktop.DBus.Error.AccessDenied` | any | notPermitted |
    /// | `org.freedesktop.DBus.Error.NoReply`, `org.freedesktop.DBus.Error.Timeout`, `org.freedesktop.DBus.Error.TimedOut` | any | timeout |
    /// | `org.freedesktop.DBus.Error.ServiceUnknown`, `org.freedesktop.DBus.Error.NameHasNoOwner`, `org.freedesktop.DBus.Error.Disconnected` | any (bluetoothd gone) | transient |
    /// | anything else | | unknown |
    public static func classifying(errorName: String, message: String) -> ConnectionFailure {
        ConnectionFailure(classify(errorName: errorName, message: message), errorName: errorName, message: message)
    }

    static func classify(errorName: String, message: String) -> FailureClass {
        let lowered = message.lowercased()
        switch errorName {
        case "org.bluez.Error.InProgress":
            return .inProgress
        case "org.bluez.Error.Failed", "org.bluez.Failed":
            if lowered.contains("already in progress") { return .inProgress }
            if lowered.contains("connection-canceled") || lowered.contains("connection canceled") { return .cancelled }
            if lowered.contains("timeout") || lowered.contains("timed out") { return .timeout }
            return .transient
        case "org.bluez.Error.NotReady":
            return .notReady
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod", "org.bluez.Error.DoesNotExist":
            return .deviceGone
        case "org.bluez.Error.NotSupported", "org.bluez.Error.NotAvailable":
            return .notSupported
        case "org.bluez.Error.NotPermitted", "org.bluez.Error.NotAuthorized", "org.bluez.Error.AuthenticationFailed",
             "org.bluez.Error.AuthenticationRejected", "org.freedesktop.DBus.Error.AccessDenied":
            return .notPermitted
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut":
            return .timeout
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.Disconnected":
            return .transient
        default:
            return .unknown
        }
    }
}
