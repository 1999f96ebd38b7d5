/// relink's structured journal fields, used as swift-log metadata keys.
///
/// ```swift
/// logger.warning("connect failed", metadata: RelinkMessageID.connectFailed.metadata.merging([
///     RelinkField.peripheral: "AA:BB:CC:DD:EE:FF", RelinkField.attempt: "3",
/// ]) { $1 })
/// ```
public enum RelinkField {
    /// The restore identifier (the app-chosen key of restorable state).
    public static let restoreID = "RELINK_RESTORE_ID"
    /// The peripheral's Bluetooth address or BlueZ object path.
    public static let peripheral = "RELINK_PERIPHERAL"
    /// The event name (see ``RelinkMessageID/eventName``).
    public static let event = "RELINK_EVENT"
    /// The reconnect strategy in force.
    public static let strategy = "RELINK_STRATEGY"
    /// The attempt number, from 1.
    public static let attempt = "RELINK_ATTEMPT"
    /// The error, as text or a D-Bus error name.
    public static let error = "RELINK_ERROR"
    /// The adapter, such as `hci0`.
    public static let adapter = "RELINK_ADAPTER"
    /// The journal's catalog key; see ``RelinkMessageID``.
    public static let messageID = "MESSAGE_ID"
}
