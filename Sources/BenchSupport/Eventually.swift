/// Polls `condition` every 100 ms until it holds, or throws
/// ``TimeoutError`` after `timeout`.
/// - Throws: ``TimeoutError``; `CancellationError` when the task is cancelled.
public func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw TimeoutError(what: what)
}

/// What ``eventually(timeout:_:_:)`` waited for in vain.
public struct TimeoutError: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}
