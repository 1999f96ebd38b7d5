/// What a reconnect policy needs to know about a failed BlueZ call.
///
/// The classes follow what BlueZ actually reports (see `bluez-facts.md`):
/// every asynchronous LE connect failure, a timeout included, comes back as
/// `org.bluez.Error.Failed` with "le-connection-abort-by-local", so such a
/// failure cannot be told from "out of range" and is `transient`.
public enum BlueZErrorClass: String, Sendable, Hashable, CaseIterable, Codable {
    /// Worth retrying soon: the link could not be made or was aborted
    /// (out of range, connect timeout, connection cancelled, busy).
    case transient
    /// Another operation on the same object is still running
    /// (`InProgress`, or `Failed` "Operation already in progress" on 5.66).
    case inProgress
    /// The adapter is off or not ready: wait for `Powered=true` instead of
    /// polling.
    case notReady
    /// The object is gone (`UnknownObject`, `DoesNotExist`): the device was
    /// evicted from BlueZ's cache; a scan is needed to find it again.
    case deviceGone
    /// The operation cannot work with this device or adapter.
    case notSupported
    /// Refused for lack of permission or authorisation (pairing, policy).
    case notPermitted
    /// bluetoothd did not answer in time or is not on the bus: the layer
    /// resynchronises when it comes back.
    case serviceUnavailable
    /// relink's own wait (for a connection, for `ServicesResolved`) ran out.
    case timeout
    /// Anything else: kept with its original name and message.
    case unknown
}
