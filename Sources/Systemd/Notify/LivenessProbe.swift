/// Proves that the part of relinkd that matters is alive, for the watchdog.
///
/// relinkd passes a probe that round-trips through its event loop: when the
/// loop hangs, the probe does not return in time and ``WatchdogService``
/// withholds `WATCHDOG=1`, so systemd restarts the service.
public protocol LivenessProbe: Sendable {
    /// Returns `true` when alive. May suspend; it must return promptly once the
    /// calling task is cancelled (the watchdog cancels a probe that takes
    /// longer than one ping period and counts it as failed).
    func check() async -> Bool
}

/// A probe made from a closure.
public struct ClosureLivenessProbe: LivenessProbe {
    private let body: @Sendable () async -> Bool

    public init(_ body: @escaping @Sendable () async -> Bool) {
        self.body = body
    }

    public func check() async -> Bool {
        await body()
    }
}
