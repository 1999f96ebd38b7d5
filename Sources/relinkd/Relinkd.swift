import RelinkAPI
import ArgumentParser
import DBus
import Foundation
import Logging
import RelinkModel
import RelinkDaemon
import RelinkStore
import Restoration
import ServiceLifecycle
import Systemd

@main
struct Relinkd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relinkd",
        abstract: "Keeps Bluetooth LE links alive across restarts of clients, relinkd, bluetoothd, adapters and the machine.",
        version: RelinkVersion.string)

    @Option(name: .long, help: "D-Bus address of the bus to use (default: $DBUS_SYSTEM_BUS_ADDRESS, else the system bus).")
    var busAddress: String?

    @Option(name: .long, help: "Directory for the restore store (default: $STATE_DIRECTORY, as the unit's StateDirectory= sets it, else /var/lib/relink).")
    var stateDirectory: String?

    @Option(name: .long, help: "The Bluetooth adapter to use.")
    var adapter: String = "hci0"

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(name: .long, help: "auto, journal or stderr.")
    var logDestination: String = "auto"

    @Option(name: .customLong("launch-service-directory"),
            help: "A service directory of the bus, where relinkd reads activation files to check who may have a program relaunched (repeatable; default: the system bus's standard ones). See docs/relaunch.md.")
    var launchServiceDirectories: [String] = []

    @Option(name: .customLong("systemd-manager-address"),
            help: "The bus address of the systemd manager that starts launch specs' units (default: relinkd's own bus, where org.freedesktop.systemd1 is the system manager). See docs/relaunch.md#systemd.")
    var systemdManagerAddress: String?

    @Option(name: .customLong("user-runtime-directory"),
            help: "A user's runtime directory, %U standing for the uid, where relinkd reaches that user's own systemd manager to start a unit of a user's launch spec. See docs/relaunch.md#systemd.")
    var userRuntimeDirectory: String = "/run/user/%U"

    @Option(name: .long, help: "relinkd's configuration file: the per-user bounds (default: /etc/relink/relinkd.conf; a missing file means the defaults). See docs/relinkd-conf.md.")
    var config: String?

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        guard LogDestination(rawValue: logDestination) != nil else { throw ValidationError("--log-destination must be auto, journal or stderr") }
        guard !adapter.isEmpty, adapter.utf8.count <= 32,
              adapter.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
            throw ValidationError("--adapter must be an adapter name such as hci0")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let destination = LogDestination(rawValue: logDestination) ?? .auto
        LoggingSystem.bootstrap { label in
            JournalLogHandler(label: label, identifier: "relinkd", destination: destination, logLevel: level, subject: { message, metadata in
                JournalField.subject(of: message) { metadata[$0.rawValue]?.description }
            })
        }
        let logger = Logger(label: "relinkd")
        let directory = stateDirectory
            ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? "/var/lib/relink"  // never the current directory: a restart from elsewhere would find no state
        // What can fail without touching state is checked before a new
        // state is made: the configuration, the bus, and another relinkd
        // holding org.relink on it (issue 38, item 5). An existing store is
        // opened first, so that its problems are told even with no bus.
        let bounds: UserBounds
        do {
            bounds = try Self.bounds(configFile: config, logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(78)  // EX_CONFIG
        }
        let bus: Connection.Bus = busAddress.map { .address($0) } ?? .system
        var early: Connection?
        if !FileManager.default.fileExists(atPath: directory + "/" + RelinkStore.databaseFileName) {
            let connection = try await Connection.connect(to: bus)
            try await RelinkService.checkNameFree(on: connection)
            early = connection
        }
        let store: RelinkStore
        do {
            store = try RelinkStore(directory: directory, logger: logger)
        } catch {
            // Already logged at critical with the path, the cause and the fix;
            // the exit status says which (State/README.md, "Bad state").
            throw ExitCode(error.exitStatus)
        }
        for file in store.quarantined {
            logger.error("a bad state file was quarantined: \(file.originalPath) (\(file.reason)) moved to \(file.quarantinedPath); started EMPTY",
                         metadata: RelinkMessageID.stateFileQuarantined.metadata.merging(.journal([
                             .file: "\(file.quarantinedPath)", .storePath: "\(file.originalPath)",
                             .error: "\(file.reason)",
                         ])) { $1 })
        }
        let connection = if let early { early } else { try await Connection.connect(to: bus) }
        let notifier = Notifier()
        // The test interface org.relink.Control1, off unless asked for
        // (docs/api/Control1.md); like the stall hook, by the environment.
        let control = ProcessInfo.processInfo.environment["RELINK_CONTROL_INTERFACE"] == "1"
        if control { logger.warning("test interface org.relink.Control1 enabled (RELINK_CONTROL_INTERFACE=1): root only") }
        let hooks = ProcessInfo.processInfo.environment["RELINK_TEST_HOOKS"] == "1"
        // Test hook: start-up waits this many seconds (or until SIGTERM), as
        // a slow start-up with a large store would.
        let hold = hooks ? ProcessInfo.processInfo.environment["RELINK_TEST_HOLD_STARTUP"].flatMap(Double.init).map { Duration.seconds($0) } : nil
        let relink = try await RelinkService(connection: connection, store: store, adapter: adapter, notifier: notifier, logger: logger,
                                             controlInterface: control, startUpHold: hold,
                                             launchServiceDirectories: launchServiceDirectories.isEmpty ? BusLauncher.systemServiceDirectories : launchServiceDirectories,
                                             systemdManagerAddress: systemdManagerAddress, userRuntimeDirectory: userRuntimeDirectory,
                                             bounds: bounds)
        var services: [any Service] = [relink]
        if let watchdog = try WatchdogService.fromEnvironment(notifier: notifier, probe: relink.probe, logger: logger) {
            services.append(watchdog)
        }
        if hooks {
            logger.warning("test hooks enabled: SIGUSR1 stalls the event loop")
            services.append(StallHookService(relink: relink, duration: .seconds(3)))
        }
        // Last, so that it is the first to hear of a graceful shutdown.
        services.append(StoppingNotificationService(notifier: notifier, logger: logger))
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    /// The bounds `configFile` sets (`/etc/relink/relinkd.conf` when nil,
    /// the defaults when that file is missing), logged.
    /// - Throws: a `ValidationError` naming the file and line of a bad
    ///   setting, or the file when it cannot be read.
    static func bounds(configFile: String?, logger: Logger) throws -> UserBounds {
        let path = configFile ?? "/etc/relink/relinkd.conf"
        let bounds: UserBounds
        if configFile == nil && !FileManager.default.fileExists(atPath: path) {
            bounds = .defaults
        } else {
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw ValidationError("cannot read the configuration file \(path): \(error.localizedDescription)")
            }
            do { bounds = try UserBounds.parse(config: text) } catch {
                throw ValidationError("configuration file \(path), \(error)")
            }
        }
        logger.info("per-user bounds: \(QuotaBound.allCases.map { "max-\($0)=\(bounds[$0])" }.joined(separator: " "))",
                    metadata: .journal([.file: "\(path)"]))
        return bounds
    }
}
