import Testing
@testable import BenchSupport

/// The two ways a test may wait: for a condition (bounded), or, where
/// nothing must happen, for a listed stretch of time.
@Suite struct EventuallyTests {
    @Test func eventuallyReturnsOnceTheConditionHolds() async throws {
        var polls = 0
        try await eventually(timeout: .seconds(20), "the third poll") {
            polls += 1
            return polls == 3
        }
        #expect(polls == 3)
    }

    @Test func eventuallyFailsWhenTheConditionNeverComes() async {
        await #expect(throws: TimeoutError.self) {
            try await eventually(timeout: .milliseconds(300), "something that never comes") { false }
        }
    }

    @Test func observeQuietlyFailsAtOnceWhenTheConditionBreaks() async {
        let start = ContinuousClock.now
        await #expect(throws: QuietError.self) {
            try await observeQuietly(for: .seconds(60), "a condition that breaks at once") { false }
        }
        #expect(ContinuousClock.now - start < .seconds(30), "it waited out the window")
    }

    @Test func observeQuietlyChecksThroughoutTheWindow() async throws {
        var polls = 0
        try await observeQuietly(for: .milliseconds(300), "a quiet window") {
            polls += 1
            return true
        }
        #expect(polls >= 2, "checked at the start and at the end at least")
    }
}
