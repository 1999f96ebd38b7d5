import Glibc
import Logging
import RelinkModel
import ServiceLifecycle
import Systemd
import UnixSignals

/// `relink-systemd-probe notify`: plays the sd_notify part of a daemon, for
/// the notify tests. Under `$NOTIFY_SOCKET` it sends EXTEND_TIMEOUT_USEC, a
/// STATUS while "loading", READY=1 with a status, then pings the watchdog at
/// half of `$WATCHDOG_USEC` while its liveness probe answers. SIGUSR1 stalls
/// the probe (as a hung event loop would), SIGUSR2 un-stalls it, SIGTERM shuts
/// down gracefully (STOPPING=1). Logs go to stderr. Prints
/// `watchdog-period-usec=N` (or `none`) on stdout first.
enum NotifyScenario {
    static func run() async -> Int32 {
        let logger = Logger(label: "org.relink.probe") { label in
            JournalLogHandler(label: label, identifier: "relink-systemd-probe", destination: .stderr, logLevel: .debug)
        }
        let notifier = Notifier()
        do {
            let period = try notifier.watchdogPingPeriod
            emit("watchdog-period-usec=" + (period.map { String(usec($0)) } ?? "none"))

            try notifier.extendTimeout(.seconds(5))
            try notifier.status("loading state\nfrom the store")
            // The stall hook traps its signals before READY tells the test to go on.
            let stallControl = await StallControlService(
                probe: StallableProbe(wrapping: ClosureLivenessProbe { true }), logger: logger)
            var services: [any Service] = [stallControl]
            if let period {
                services.append(
                    WatchdogService(notifier: notifier, period: period, probe: stallControl.probe, logger: logger))
            }
            // READY=1 from inside the group: by then it traps SIGTERM, so a
            // stop request right after READY shuts down gracefully.
            services.append(ClosureService {
                try notifier.ready(status: "1 identifier, 0 connected, 1 pending")
                logger.info("ready", metadata: RelinkMessageID.started.metadata)
                try? await gracefulShutdown()
            })
            services.append(StoppingNotificationService(notifier: notifier, logger: logger))

            let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm], logger: logger)
            try await group.run()
            return 0
        } catch {
            logger.error("notify scenario failed", metadata: .journal([.error: "\(error)"]))
            return 1
        }
    }

    /// `relink-systemd-probe ready-after-stopping`: `STOPPING=1`, then
    /// `READY=1` from a copy of the notifier (as a start-up that ends while
    /// relinkd stops would send it), then `STATUS=done` to mark the end.
    /// Prints `ready-sent=BOOL`: what ``Notifier/ready(status:)`` returned.
    static func readyAfterStopping() -> Int32 {
        let notifier = Notifier()
        let startUp = notifier
        do {
            try notifier.stopping()
            emit("ready-sent=\(try startUp.ready(status: "ready too late"))")
            try notifier.status("done")
            return 0
        } catch {
            emit("failed: \(error)")
            return 1
        }
    }

    private static func usec(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Writes a line to stdout at once (stdout is a pipe, so `print` would buffer).
    static func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
}
