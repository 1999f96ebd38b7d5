import CSystemd
import Synchronization

/// Tells the service manager about relinkd's state through `sd_notify(3)`.
///
/// Every method sends one datagram to `$NOTIFY_SOCKET` and returns whether it
/// was sent: `false` means no service manager listens (no `$NOTIFY_SOCKET`),
/// which is normal when relinkd runs outside systemd. All methods throw
/// ``SystemdError/notifyFailed(state:errno:)`` when the socket is set but the
/// datagram could not be sent.
///
/// Copies of one notifier share one lifecycle: once one of them sent
/// `STOPPING=1`, ``ready(status:)`` sends nothing on any of them, so systemd
/// never hears `READY=1` after `STOPPING=1` (a start-up that ends while
/// relinkd is stopping, say after SIGTERM during start-up, is no readiness).
public struct Notifier: Sendable {
    /// Shared by copies.
    private let lifecycle = NotifierLifecycle()

    public init() {}

    /// Sends `READY=1`, optionally together with a `STATUS=` line; sends
    /// nothing and returns `false` once ``stopping()`` was sent.
    /// - Throws: ``SystemdError/notifyFailed(state:errno:)``.
    @discardableResult
    public func ready(status: String? = nil) throws(SystemdError) -> Bool {
        var lines = ["READY=1"]
        if let status { lines.append("STATUS=" + StatusLine.sanitise(status)) }
        return try lifecycle.stoppingSent.withLock { (stopping: inout Bool) throws(SystemdError) -> Bool in
            if stopping { return false }
            return try send(lines)
        }
    }

    /// Sends `STATUS=` with `text` made into one line (control characters,
    /// including newlines, become spaces).
    /// - Throws: ``SystemdError/notifyFailed(state:errno:)``.
    @discardableResult
    public func status(_ text: String) throws(SystemdError) -> Bool {
        try send(["STATUS=" + StatusLine.sanitise(text)])
    }

    /// Sends `STOPPING=1`: relinkd has begun a graceful shutdown. From now
    /// on ``ready(status:)`` sends nothing.
    /// - Throws: ``SystemdError/notifyFailed(state:errno:)``.
    @discardableResult
    public func stopping() throws(SystemdError) -> Bool {
        try lifecycle.stoppingSent.withLock { (stopping: inout Bool) throws(SystemdError) -> Bool in
            stopping = true
            return try send(["STOPPING=1"])
        }
    }

    /// Sends `EXTEND_TIMEOUT_USEC=`: the current start-up or shutdown needs
    /// `duration` more (counted from now; negative durations count as zero).
    /// - Throws: ``SystemdError/notifyFailed(state:errno:)``.
    @discardableResult
    public func extendTimeout(_ duration: Duration) throws(SystemdError) -> Bool {
        try send(["EXTEND_TIMEOUT_USEC=\(duration.wholeMicroseconds)"])
    }

    /// Sends `WATCHDOG=1`. Call it only from a path that proves relinkd is alive
    /// (see ``WatchdogService``).
    /// - Throws: ``SystemdError/notifyFailed(state:errno:)``.
    @discardableResult
    public func watchdog() throws(SystemdError) -> Bool {
        try send(["WATCHDOG=1"])
    }

    /// The watchdog timeout systemd expects (`WatchdogSec=`, passed as
    /// `$WATCHDOG_USEC` for `$WATCHDOG_PID`), or `nil` when the watchdog is off
    /// or meant for another process. Ping at half of it (``watchdogPingPeriod``).
    /// - Throws: ``SystemdError/invalidWatchdogEnvironment(errno:)`` when the
    ///   variables are malformed.
    public var watchdogInterval: Duration? {
        get throws(SystemdError) {
            var usec: UInt64 = 0
            let result = sd_watchdog_enabled(0, &usec)
            if result < 0 { throw .invalidWatchdogEnvironment(errno: -result) }
            if result == 0 || usec == 0 { return nil }
            return .microseconds(Int64(clamping: usec))
        }
    }

    /// Half of ``watchdogInterval``: how often ``WatchdogService`` pings.
    /// - Throws: ``SystemdError/invalidWatchdogEnvironment(errno:)``.
    public var watchdogPingPeriod: Duration? {
        get throws(SystemdError) { try watchdogInterval.map { $0 / 2 } }
    }

    /// Sends the given `KEY=value` assignments in one datagram.
    /// - Throws: ``SystemdError/notifyFailed(state:errno:)``.
    @discardableResult
    public func send(_ assignments: [String]) throws(SystemdError) -> Bool {
        let state = assignments.joined(separator: "\n")
        let result = sd_notify(0, state)
        if result < 0 { throw .notifyFailed(state: state, errno: -result) }
        return result > 0
    }
}

/// What copies of one ``Notifier`` share.
private final class NotifierLifecycle: Sendable {
    /// Whether `STOPPING=1` went out; locked while `READY=1` or `STOPPING=1`
    /// is sent, so that the two cannot cross.
    let stoppingSent = Mutex(false)
}

extension Duration {
    /// The duration in whole microseconds, at least zero (systemd's `usec_t`).
    var wholeMicroseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        if overflow { return .max }
        return whole &+ UInt64(max(attoseconds, 0) / 1_000_000_000_000)
    }
}
