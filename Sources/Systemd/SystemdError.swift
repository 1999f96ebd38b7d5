/// Errors from libsystemd calls, each carrying the `errno` libsystemd returned
/// (as a positive number).
public enum SystemdError: Error, Equatable, Sendable {
    /// `sd_notify` failed to send `state` to `$NOTIFY_SOCKET` (for example
    /// `ECONNREFUSED` when nobody listens, `EINVAL` for a malformed socket address).
    case notifyFailed(state: String, errno: Int32)
    /// `sd_watchdog_enabled` rejected `$WATCHDOG_USEC` or `$WATCHDOG_PID` as malformed.
    case invalidWatchdogEnvironment(errno: Int32)
    /// `sd_journal_sendv` could not hand an entry to journald.
    case journalSendFailed(errno: Int32)
}
