import BenchSupport

// How DBusTests wait: BenchSupport's waits, polled every 10 ms (the binding
// answers in microseconds).

/// BenchSupport's bounded wait, polled every 10 ms.
func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    try await BenchSupport.eventually(timeout: timeout, poll: .milliseconds(10), what, condition)
}
