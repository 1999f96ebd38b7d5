internal import Restoration
import Synchronization

/// The clock of relinkd's machines and timers: `ContinuousClock` in
/// relinkd, or time moved by hand in tests (``manual()``), so that an
/// in-process test plays a 30 s timeout, a backoff or a grace period without
/// waiting for it. Its instants are `ContinuousClock`'s either way, so every
/// time the daemon keeps is one type.
public struct DaemonClock: Clock, Sendable {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    /// Hand-moved time: a manual clock, and the instant its zero stands for.
    private final class Manual: Sendable {
        let clock = ManualClock()
        let zero = ContinuousClock.now
    }

    private let manual: Manual?

    /// Real time.
    public static let continuous = DaemonClock(manual: nil)

    private init(manual: Manual?) { self.manual = manual }

    /// A clock that moves only with ``advance(by:)``; it starts at the real
    /// time of this call.
    public static func manual() -> DaemonClock { DaemonClock(manual: Manual()) }

    /// Moves a manual clock forward, waking the timers now due; nothing on
    /// the continuous clock.
    public func advance(by duration: Duration) {
        manual?.clock.advance(by: duration)
    }

    /// How many timers wait on a manual clock (0 on the continuous one).
    public var sleeperCount: Int { manual?.clock.sleeperCount ?? 0 }

    /// The current instant.
    public var now: Instant {
        guard let manual else { return ContinuousClock.now }
        return manual.zero.advanced(by: manual.clock.now.offset)
    }

    /// The resolution of the underlying clock.
    public var minimumResolution: Duration {
        manual?.clock.minimumResolution ?? ContinuousClock().minimumResolution
    }

    /// Sleeps until `deadline`, on real or hand-moved time.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        guard let manual else { return try await ContinuousClock().sleep(until: deadline, tolerance: tolerance) }
        try await manual.clock.sleep(until: ManualClock.Instant(offset: manual.zero.duration(to: deadline)), tolerance: tolerance)
    }
}
