import RelinkDaemon
import ServiceLifecycle
import UnixSignals

/// Test hook, enabled only by `RELINK_TEST_HOOKS=1`: each SIGUSR1 makes the
/// daemon's loop hang for a few seconds, as a hung loop would, so that a
/// test can check that the watchdog pings stop while it is stalled.
struct StallHookService: Service {
    let relink: RelinkService
    let duration: Duration

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigusr1)
        await cancelWhenGracefulShutdown {
            for await _ in signals { relink.stallLoopForTesting(duration) }
        }
    }
}
