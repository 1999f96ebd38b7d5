import Testing
@testable import RelinkDaemon

/// The outbox signal throttle, on made-up instants.
@Suite struct SignalThrottleTests {
    typealias Throttle = SignalThrottle<String, ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    func at(_ ms: Int) -> ContinuousClock.Instant { t0.advanced(by: .milliseconds(ms)) }

    @Test func aQuietKeyIsSignalledAtOnceAndItsWindowEndsQuietly() {
        var throttle = Throttle(interval: .milliseconds(100))
        #expect(throttle.changed("a", at: at(0)) == .signal(windowEnd: at(100)))
        #expect(throttle.windowEnded("a", at: at(100)) == nil)
        #expect(throttle.active == 0)
        // Quiet again: the next change is at once too.
        #expect(throttle.changed("a", at: at(250)) == .signal(windowEnd: at(350)))
    }

    @Test func changesWithinAWindowAreOneSignalAtItsEnd() {
        var throttle = Throttle(interval: .milliseconds(100))
        #expect(throttle.changed("a", at: at(0)) == .signal(windowEnd: at(100)))
        for ms in stride(from: 2, to: 100, by: 2) { #expect(throttle.changed("a", at: at(ms)) == .deferred) }
        #expect(throttle.windowEnded("a", at: at(100)) == at(200))
        #expect(throttle.changed("a", at: at(150)) == .deferred)
        #expect(throttle.windowEnded("a", at: at(200)) == at(300))
        #expect(throttle.windowEnded("a", at: at(300)) == nil)
    }

    /// A stream of changes every 2 ms for a second (501 changes): 1 signal
    /// at once, one at each window end from 100 to 1000 ms, and one at
    /// 1100 ms for the change at 1000 ms: 12 in all, the last change always
    /// covered by a signal.
    @Test func aStreamIsSignalledOncePerIntervalAndItsLastChangeIsNeverLost() {
        var throttle = Throttle(interval: .milliseconds(100))
        var signals: [Int] = []
        var windowEnd: ContinuousClock.Instant?
        var lastChange = 0
        for ms in stride(from: 0, through: 1000, by: 2) {
            if let end = windowEnd, end <= at(ms) {
                windowEnd = throttle.windowEnded("a", at: end)
                if windowEnd != nil { signals.append(ms) }
            }
            lastChange = ms
            if case .signal(let end) = throttle.changed("a", at: at(ms)) {
                signals.append(ms)
                windowEnd = end
            }
        }
        while let end = windowEnd {
            windowEnd = throttle.windowEnded("a", at: end)
            if windowEnd != nil { signals.append(Int((end - t0) / .milliseconds(1))) }
        }
        #expect(signals == [0] + stride(from: 100, through: 1100, by: 100).map { $0 }, "\(signals)")
        #expect((signals.last ?? 0) >= lastChange, "the last change at \(lastChange) ms was not signalled: \(signals)")
        #expect(throttle.active == 0)
    }

    @Test func keysAreIndependentAndRemovalForgetsTheWindow() {
        var throttle = Throttle(interval: .milliseconds(100))
        #expect(throttle.changed("a", at: at(0)) == .signal(windowEnd: at(100)))
        #expect(throttle.changed("b", at: at(10)) == .signal(windowEnd: at(110)))
        #expect(throttle.changed("a", at: at(20)) == .deferred)
        throttle.remove("a")
        #expect(throttle.windowEnded("a", at: at(100)) == nil, "a removed key's stale timer signals nothing")
        #expect(throttle.windowEnded("b", at: at(110)) == nil)
    }
}
