import BenchSupport

// How SystemdTests wait: BenchSupport's bounded wait, polled every 5 ms.

/// BenchSupport's bounded wait, polled every 5 ms.
func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    try await BenchSupport.eventually(timeout: timeout, poll: .milliseconds(5), what, condition)
}
