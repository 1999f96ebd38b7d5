public import Logging
public import ServiceLifecycle

/// Sends `WATCHDOG=1` every ping period, but only after a liveness probe
/// succeeded within that period.
///
/// `run()` returns on graceful shutdown or cancellation. A probe that ignores
/// cancellation while hung blocks this service too, which still stops the
/// pings (and systemd then restarts relinkd).
public struct WatchdogService: Service, CustomStringConvertible {
    private let notifier: Notifier
    private let period: Duration
    private let probe: any LivenessProbe
    private let logger: Logger

    /// - Parameters:
    ///   - period: time between pings; half of `WatchdogSec=` (see
    ///     ``Notifier/watchdogPingPeriod``). Also the time a probe may take.
    ///   - probe: must succeed before each ping.
    public init(notifier: Notifier, period: Duration, probe: any LivenessProbe, logger: Logger) {
        self.notifier = notifier
        self.period = max(period, .milliseconds(1))
        self.probe = probe
        self.logger = logger
    }

    /// A service pinging at half of `$WATCHDOG_USEC`, or `nil` when systemd
    /// enabled no watchdog for this process.
    /// - Throws: ``SystemdError/invalidWatchdogEnvironment(errno:)``.
    public static func fromEnvironment(
        notifier: Notifier, probe: any LivenessProbe, logger: Logger
    ) throws(SystemdError) -> WatchdogService? {
        guard let period = try notifier.watchdogPingPeriod else { return nil }
        return WatchdogService(notifier: notifier, period: period, probe: probe, logger: logger)
    }

    public var description: String { "WatchdogService(period: \(period))" }

    public func run() async {
        await cancelWhenGracefulShutdown { await self.pingLoop() }
    }

    private func pingLoop() async {
        let clock = ContinuousClock()
        var deadline = clock.now
        var wasAlive = true
        while !Task.isCancelled {
            let alive = await checkWithinPeriod()
            if Task.isCancelled { return }
            if alive {
                ping()
                if !wasAlive { logger.notice("liveness probe succeeds again; watchdog pings resumed") }
            } else if wasAlive {
                logger.warning(
                    "liveness probe failed; withholding watchdog pings",
                    metadata: RelinkMessageID.livenessProbeFailed.metadata)
            }
            wasAlive = alive
            deadline = max(deadline.advanced(by: period), clock.now)
            do { try await clock.sleep(until: deadline) } catch { return }
        }
    }

    private func ping() {
        do {
            try notifier.watchdog()
        } catch {
            logger.warning("watchdog ping failed", metadata: [RelinkField.error: "\(error)"])
        }
    }

    /// Runs the probe against a timer of one period; `false` when the timer wins.
    private func checkWithinPeriod() async -> Bool {
        let probe = self.probe
        let period = self.period
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask { await probe.check() }
            group.addTask {
                try? await Task.sleep(for: period)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? false
        }
    }
}
