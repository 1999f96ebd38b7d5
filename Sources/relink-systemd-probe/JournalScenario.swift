import Logging
import RelinkModel
import Systemd

/// `relink-systemd-probe journal [auto|journal|stderr] [level] [run-tag]`:
/// logs a fixed set of relink events through JournalLogHandler, for the
/// journald round-trip test.
enum JournalScenario {
    static func run(_ arguments: ArraySlice<String>) {
        let requested = arguments.first.flatMap(LogDestination.init(rawValue:)) ?? .auto
        let level = arguments.dropFirst().first.flatMap(Logger.Level.init(rawValue:)) ?? .info
        let runTag = arguments.dropFirst(2).first ?? "probe"

        let handler = JournalLogHandler(
            label: "org.relink.probe", identifier: "relink-systemd-probe", destination: requested, logLevel: level)
        print("destination=\(handler.destination.rawValue)")
        LoggingSystem.bootstrap { _ in handler }

        var logger = Logger(label: "org.relink.probe")
        logger[metadataKey: JournalField.testRun.rawValue] = .string(runTag)

        func with(_ id: RelinkMessageID, _ extra: Logger.Metadata) -> Logger.Metadata {
            id.metadata.merging(extra) { $1 }
        }

        logger.info("relinkd started", metadata: RelinkMessageID.started.metadata)
        logger.debug("debug detail that the level filter decides on")
        logger.notice(
            "restored heart-rate strap",
            metadata: with(.restored, .journal([
                .restoreID: "probe-restore-1",
                .peripheral: "AA:BB:CC:DD:EE:01",
                .strategy: "backoff",
            ])))
        logger.warning(
            "connect failed\nsecond line of the message",
            metadata: with(.connectFailed, [
                JournalField.restoreID.rawValue: "probe-restore-1",
                JournalField.peripheral.rawValue: "AA:BB:CC:DD:EE:01",
                JournalField.attempt.rawValue: "3",
                JournalField.error.rawValue: "org.bluez.Error.Failed: le-connection-abort-by-local",
                "peripheral.name": "strap one",
                "_private": "underscore",
                "9lives": "digit",
                "message": "collides with MESSAGE",
            ]))
        logger.error("reconnect gave up", metadata: with(.reconnectGaveUp, .journal([.attempt: "10"])))
    }
}
