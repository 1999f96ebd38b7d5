#if canImport(Glibc)
import Glibc
#endif
import BlueZ
public import DBus
import RelinkAPI
public import RelinkModel
public import Logging
public import RelinkStore
public import ServiceLifecycle
import Foundation
import Restoration
public import Systemd

/// relinkd as a swift-service-lifecycle `Service`: serves its bus
/// connection (the control object and the auto-connect profile), runs the
/// ``Daemon`` loop, sends `READY=1` with a `STATUS=` summary once the store
/// is restored, and stops on graceful shutdown (SIGTERM), closing the store.
public struct RelinkService: Service {
    let connection: Connection
    let daemon: Daemon
    let store: RelinkStore
    let notifier: Notifier
    let logger: Logger
    /// Test hook: how long start-up waits before the store is loaded.
    let startUpHold: Duration?
    /// How often `STATUS=` is refreshed when it changed.
    static let statusInterval: Duration = .seconds(5)
    /// The start-up time systemd is asked for (`EXTEND_TIMEOUT_USEC=`) as
    /// each step of start-up ends: the shipped unit's `TimeoutStartSec=`.
    static let startUpStepAllowance: Duration = .seconds(60)

    /// Connects the pieces and exports `/org/relink/control`; the bus name
    /// `org.relink` is taken in ``run()`` once every identifier is restored
    /// and published (a client never hears "unknown identifier" for one
    /// that is still being restored: until then relinkd is not on the bus,
    /// which clients treat as retryable, and D-Bus activation queues calls).
    /// - Throws: `DBusError` from the bus; `Failed` when
    ///   another process owns `org.relink`; `InvalidArguments`
    ///   for a bad adapter name.
    /// - Parameters:
    ///   - identity: how callers' Unix users are learnt (the bus; tests may
    ///     inject another mapping).
    ///   - controlInterface: whether to export the test interface
    ///     `org.relink.Control1` (root only; docs/api/Control1.md). Off in
    ///     production.
    ///   - startUpHold: test hook: start-up waits this long (or until
    ///     relinkd stops) before the store is loaded, as a slow start-up
    ///     would; nil in production (relinkd: `RELINK_TEST_HOLD_STARTUP`).
    ///   - launchServiceDirectories: the bus's service directories, where
    ///     the relaunch's permission rule reads activation files (docs/relaunch.md).
    ///   - systemdManagerAddress: the bus of the systemd manager that starts
    ///     launch specs' units; nil: relinkd's own bus (docs/relaunch.md#systemd).
    ///   - userRuntimeDirectory: a user's runtime directory (`%U`: the uid),
    ///     where a user's launch spec unit is started on their own manager.
    ///   - bounds: the per-user bounds (relinkd.conf, docs/relinkd-conf.md).
    public init(connection: Connection, store: RelinkStore, adapter: String, notifier: Notifier = Notifier(), logger: Logger,
                identity: CallerIdentity = .bus, controlInterface: Bool = false, startUpHold: Duration? = nil,
                launchServiceDirectories: [String] = BusLauncher.systemServiceDirectories, systemdManagerAddress: String? = nil,
                userRuntimeDirectory: String = "/run/user/%U", bounds: UserBounds = .defaults) async throws {
        let bluez = BlueZClient(connection: connection, logger: logger)
        let daemon = try Daemon(bluez: bluez, store: store, adapter: adapter, logger: logger,
                                launcher: BusLauncher(connection: connection, serviceDirectories: launchServiceDirectories,
                                                      systemdManagerAddress: systemdManagerAddress, userRuntimeDirectory: userRuntimeDirectory),
                                bounds: bounds)
        if controlInterface { try connection.export(try ControlObject.make(daemon: daemon, identity: identity)) }
        let publisher = APIPublisher(connection: connection, identity: identity,
                                     interfaces: APIInterfaces(daemon: daemon, identity: identity), logger: logger)
        // The adapter's state is set once start-up has read it, before
        // relinkd takes its bus name.
        try publisher.start(managerValues: [
            Manager1Property.version.rawValue: .string(RelinkVersion.string), Manager1Property.adapter.rawValue: .string(adapter), Manager1Property.ready.rawValue: .boolean(false),
        ].merging(APIPublisher.adapterValues(AdapterStatus(.bluetoothdMissing))) { $1 })
        await daemon.attach(publisher)
        try await Self.checkNameFree(on: connection)
        self.connection = connection
        self.daemon = daemon
        self.store = store
        self.notifier = notifier
        self.logger = logger
        self.startUpHold = startUpHold
    }

    /// Test hook: the daemon's loop hangs for `duration`, so a test can see
    /// that the watchdog pings stop while it does. relinkd wires it to
    /// SIGUSR1 only when `RELINK_TEST_HOOKS=1` is in its environment.
    public func stallLoopForTesting(_ duration: Duration) {
        daemon.stallForTesting(duration)
    }

    /// A liveness probe: the daemon's loop answers a status snapshot
    /// request (constant time); false at once when cancelled.
    public var probe: any LivenessProbe { daemon.livenessProbe }

    /// Serves until graceful shutdown (SIGTERM), also when it comes during
    /// start-up: relinkd then stops restoring and never sends `READY=1`
    /// (``Systemd/Notifier`` sends none after `STOPPING=1` either).
    public func run() async throws {
        do {
            try await serve()
        } catch is CancellationError where Task.isCancelled || Task.isShuttingDownGracefully {
            // Stopped while a bus call of start-up (the name request) was under way: a stop, not a failure.
            logger.debug("stopped during start-up")
        }
        // The marker lets the next run number events on without a skip.
        let settled = await daemon.eventsSettled
        do { try store.close(markingCleanStop: settled) } catch { logger.warning("closing the store failed", metadata: .journal([.error: "\(error)"])) }
        connection.close()
    }

    /// Gives the kernel back the heap pages start-up used and freed (its
    /// machines' first steps, the start-up commit, the journal lines):
    /// glibc keeps them in the loop thread's arena otherwise. At 10,000
    /// intents that was about 75 MB of 230 MB resident (issue 31,
    /// docs/startup-profile.md). A few milliseconds, once.
    static func returnStartupPeak() {
        #if canImport(Glibc)
        // <malloc.h> is not in Swift's Glibc module: glibc's symbol, looked up.
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    private func serve() async throws {
        let connection = self.connection, daemon = self.daemon, notifier = self.notifier, logger = self.logger
        let hold = startUpHold
        try await cancelWhenGracefulShutdown {
            try await withThrowingDiscardingTaskGroup { group in
                // Clients that leave the bus are detached (they were subscribed before serving).
                let departures = try await connection.nameOwnerChanges()
                group.addTask {
                    for try await change in departures where change.newOwner == nil && change.name.hasPrefix(":") {
                        daemon.noteClientLeft(change.name)
                    }
                }
                group.addTask { try await connection.serve() }
                group.addTask {
                    // STATUS= follows the links (systemctl status shows it).
                    var last = ""
                    while true {
                        do { try await Task.sleep(for: Self.statusInterval) } catch { return }
                        let summary = await daemon.summary
                        if summary != last, await daemon.isReady {
                            last = summary
                            _ = try? notifier.status(summary)
                        }
                    }
                }
                try await withTaskExecutorPreference(connection.executor) {
                    try await daemon.run(holdingStartUp: hold, whenRestored: {
                        let reply = try await connection.requestName(RelinkNames.busName)
                        guard reply == .primaryOwner || reply == .alreadyOwner else {
                            let owner = (try? await connection.nameOwner(of: RelinkNames.busName)) ?? nil
                            throw await Self.nameTaken(by: owner ?? RelinkNames.busName, on: connection)
                        }
                    }, onStartUpStep: { step in
                        // Each step may take up to the unit's TimeoutStartSec: a
                        // slow bluetoothd and then a large store add up, a hung
                        // step still times out.
                        do { _ = try notifier.extendTimeout(Self.startUpStepAllowance) } catch {
                            logger.warning("sd_notify failed", metadata: .journal([.error: "\(error)"]))
                        }
                        logger.debug("start-up: \(step.rawValue)")
                    }) { summary in
                        logger.notice("relinkd ready: \(summary)", metadata: RelinkMessageID.started.metadata)
                        do { _ = try notifier.ready(status: summary) } catch {
                            logger.warning("sd_notify failed", metadata: .journal([.error: "\(error)"]))
                        }
                        Self.returnStartupPeak()
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// Throws when another process owns `org.relink` on `connection`'s bus.
    /// relinkd asks before it creates or opens any state (a relinkd started
    /// by hand beside a running one must leave no state directory behind),
    /// and again when its pieces are connected; the name itself is taken
    /// only once every identifier is restored.
    /// - Throws: `Failed` naming the holder's pid; `DBusError` from the bus.
    public static func checkNameFree(on connection: Connection) async throws {
        if let owner = try await connection.nameOwner(of: RelinkNames.busName) {
            throw await nameTaken(by: owner, on: connection)
        }
    }

    /// The error for `org.relink` held by `owner` (a unique name): with
    /// the holder's pid, so an operator knows which relinkd to stop.
    static func nameTaken(by owner: String, on connection: Connection) async -> RelinkError {
        let pid = (try? await connection.unixProcessID(of: owner)).map { "pid \($0), " } ?? ""
        return RelinkError(.failed, "the bus name \(RelinkNames.busName) is owned by another process (\(pid)\(owner)): "
                                  + "another relinkd runs on this bus; stop it first")
    }
}
