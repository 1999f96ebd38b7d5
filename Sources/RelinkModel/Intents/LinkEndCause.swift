/// Why bluetoothd says a link ended: the reason of BlueZ's
/// `Device1.Disconnected(reason, message)` signal (BlueZ 5.83 and later;
/// older bluetoothd, Debian 12's 5.66 and 13's 5.82 among them, sends none,
/// and relinkd then has only what the link carried to go by).
public enum LinkEndCause: String, Sendable, Hashable, CaseIterable {
    /// The link supervision timeout expired: the peripheral went out of
    /// range or lost power. A link that was up and left.
    case timeout = "org.bluez.Reason.Timeout"
    /// This host ended it (relinkd's or another program's `Disconnect`).
    case local = "org.bluez.Reason.Local"
    /// The peripheral ended it.
    case remote = "org.bluez.Reason.Remote"
    /// It ended on an authentication failure: a link that fails at once.
    case authentication = "org.bluez.Reason.Authentication"
    /// This host ended it to suspend.
    case suspend = "org.bluez.Reason.Suspend"
    /// bluetoothd gave no cause.
    case unknown = "org.bluez.Reason.Unknown"

    /// The cause a `Disconnected` reason names; unknown names (a later
    /// BlueZ's) are ``unknown``.
    public init(reason: String) {
        self = LinkEndCause(rawValue: reason) ?? .unknown
    }
}
