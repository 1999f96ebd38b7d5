public import Logging
public import ServiceLifecycle

/// Sends `STOPPING=1` as soon as graceful shutdown begins.
///
/// Put it LAST in the `ServiceGroup`'s services: the group shuts services down
/// in reverse order, so systemd hears `STOPPING=1` before the others wind down.
/// Also sends it when cancelled, since the process is going away then too.
public struct StoppingNotificationService: Service, CustomStringConvertible {
    private let notifier: Notifier
    private let logger: Logger

    public init(notifier: Notifier, logger: Logger) {
        self.notifier = notifier
        self.logger = logger
    }

    public var description: String { "StoppingNotificationService" }

    public func run() async {
        try? await gracefulShutdown()
        logger.notice("stopping", metadata: RelinkMessageID.stopping.metadata)
        do {
            try notifier.stopping()
        } catch {
            logger.warning("could not notify systemd of stopping", metadata: [RelinkField.error: "\(error)"])
        }
    }
}
