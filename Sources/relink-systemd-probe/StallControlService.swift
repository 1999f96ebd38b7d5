import Logging
import ServiceLifecycle
import Systemd
import UnixSignals

/// The probe's test hook: SIGUSR1 stalls the liveness probe, SIGUSR2 resumes it.
struct StallControlService: Service {
    let probe: StallableProbe
    private let signals: UnixSignalsSequence
    private let logger: Logger

    /// Traps SIGUSR1 and SIGUSR2 right away (their default action would kill us).
    init(probe: StallableProbe, logger: Logger) async {
        self.probe = probe
        self.logger = logger
        self.signals = await UnixSignalsSequence(trapping: .sigusr1, .sigusr2)
    }

    func run() async {
        for await signal in signals.cancelOnGracefulShutdown() {
            if signal == .sigusr1 {
                logger.debug("stalling the liveness probe")
                probe.stall()
            } else {
                logger.debug("resuming the liveness probe")
                probe.resume()
            }
        }
    }
}
