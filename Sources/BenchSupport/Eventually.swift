/// Polls `condition` every `poll` (100 ms unless told) until it holds, or
/// throws ``TimeoutError`` after `timeout`.
///
/// This is how a test waits: for the condition its next assertion relies
/// on, bounded generously (loaded CI machines are slow), never for a fixed
/// time. A condition that never comes still fails the test. Tests of
/// something that answers in microseconds (the D-Bus binding, the daemon
/// in-process) poll more often.
/// - Throws: ``TimeoutError``; what `condition` throws; `CancellationError`
///   when the task is cancelled.
public func eventually(timeout: Duration, poll: Duration = .milliseconds(100), _ what: String,
                       _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: poll)
    }
    throw TimeoutError(what: what)
}

/// What ``eventually(timeout:_:_:)`` waited for in vain.
public struct TimeoutError: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// A real-time wait, the only kind tests keep: watches for `duration`
/// that `condition` keeps holding (checked every 100 ms and once more at
/// the end), and throws ``QuietError`` as soon as it does not.
///
/// Use it only where a test asserts that something does *not* happen for a
/// while (no reconnect, no second event, no value after Unwatch): there
/// time itself is what is tested, and no condition can end the wait early.
/// Each call is listed with its reason in `Tests/README.md`.
/// - Throws: ``QuietError``; `CancellationError` when the task is cancelled.
public func observeQuietly(for duration: Duration, _ what: String, _ condition: () async -> Bool = { true }) async throws {
    let end = ContinuousClock.now + duration
    while ContinuousClock.now < end {
        guard await condition() else { throw QuietError(what: what) }
        try await Task.sleep(until: min(ContinuousClock.now + .milliseconds(100), end), clock: .continuous)
    }
    guard await condition() else { throw QuietError(what: what) }
}

/// What ``observeQuietly(for:_:_:)`` saw happen although it must not.
public struct QuietError: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "did not hold for the whole window: \(what)" }
}
