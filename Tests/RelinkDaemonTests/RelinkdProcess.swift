import BenchSupport

// RelinkdProcess, eventually and TimeoutError moved to BenchSupport (shared
// with RelinkctlTests); these names keep this module's files unchanged.
typealias RelinkdProcess = BenchSupport.RelinkdProcess
typealias TimeoutError = BenchSupport.TimeoutError

/// Polls `condition` until it holds, or throws after `timeout` (BenchSupport's).
func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    try await BenchSupport.eventually(timeout: timeout, what, condition)
}
