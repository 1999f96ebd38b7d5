// How DBusTests wait. DBusTests depends on DBus only, so it has its own
// copy of BenchSupport's two waits (Sources/BenchSupport/Eventually.swift).

/// Polls `condition` every 10 ms until it holds, or throws
/// ``WaitTimeout`` after `timeout`: the bounded wait for what the next
/// assertion relies on.
func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw WaitTimeout(what: what)
}

struct WaitTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// A real-time wait: lets `duration` pass so that something that must
/// *not* happen (a signal past a rule) has the time to show. Time is what
/// is tested there; each call is listed in Tests/README.md.
func observeQuietly(for duration: Duration, _ what: String) async throws {
    try await Task.sleep(for: duration)
}
