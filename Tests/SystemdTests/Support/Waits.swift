// How SystemdTests wait. SystemdTests does not depend on BenchSupport, so
// it has its own copy of BenchSupport's bounded wait
// (Sources/BenchSupport/Eventually.swift).

/// Polls `condition` every 5 ms until it holds, or throws ``WaitTimeout``
/// after `timeout`: the bounded wait for what the next assertion relies on.
func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw WaitTimeout(what: what)
}

struct WaitTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}
