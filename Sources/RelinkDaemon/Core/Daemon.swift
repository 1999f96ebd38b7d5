import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import RelinkModel
import RelinkAPI

/// relinkd's heart: owns the BlueZ client, the store, and per connection
/// intent a ``ConnectionStateMachine`` over `ContinuousClock`, and carries
/// out what the restoration core decides.
///
/// One loop drains one input stream (BlueZ events, operation results,
/// timers, control calls) and handles each input to the end before the
/// next. Slow BlueZ operations (Connect, Disconnect, StartNotify) and timers
/// run as child tasks of the loop's task group and report back as inputs;
/// stale timer tokens are ignored by the machines. Every state change and
/// event goes to the store in order, and the loop goes on without waiting
/// for the disk (``CommitPipeline``); a control or client call waits for
/// every earlier commit and is answered only after its own.
public actor Daemon {
    let bluez: any BlueZPort
    let store: RelinkStore
    let adapterPath: ObjectPath
    let adapterName: String
    let logger: Logger
    let clock = ContinuousClock()
    nonisolated let inputs: AsyncStream<DaemonInput>
    nonisolated let inputContinuation: DaemonInbox
    /// True while the loop waits for its next input (see ``takeInline(_:)``).
    var loopWaiting = false
    /// Where the auto-connect GATT application is exported.
    static let autoConnectRoot: ObjectPath = {
        do { return try ObjectPath("/org/relink/autoconnect") } catch { preconditionFailure("constant path") }
    }()

    var machines: [ConnectionIntentID: Machine] = [:]
    var registry = OwnershipRegistry()
    var scans = ScanCoordinator()
    var planner = SubscriptionPlanner()
    var identifiers: Set<RestoreIdentifier> = []
    var scanIntents: [RestoreIdentifier: ScanIntent] = [:]
    var peripherals: [PeripheralID: PeripheralRecord] = [:]
    var peripheralByAddress: [String: PeripheralID] = [:]
    /// Both names of each known peripheral, with when each was seen.
    var peripheralNames: [PeripheralID: PeripheralNames] = [:]
    /// Which name each identifier resolves first.
    var namePreferences: [RestoreIdentifier: NamePreference] = [:]
    /// Background auto-connect: held devices, the registration, gathered
    /// requests (the core's ``AutoConnectPolicy``).
    var autoConnect = AutoConnectPolicy()
    /// Parsed routing facts per characteristic object (``valueRoute(_:)``).
    var valueRoutes: [ObjectPath: ValueRoute] = [:]
    /// Coalesces `PropertiesChanged` of each identifier's outbox properties.
    var outboxSignals = SignalThrottle<RestoreIdentifier, ContinuousClock.Instant>(interval: Daemon.outboxSignalInterval)
    /// Links that are up while a subscribed characteristic is not yet in
    /// the mirror: the core's policy (``GattGrace``) decides when to look
    /// again and when to reconnect.
    var gattGrace = GattGrace()
    /// Machine inputs that answer an action at once (lookups), handled after
    /// the current action list.
    var immediate: [(ConnectionIntentID, Machine.Input)] = []
    /// Child tasks to start after the current input.
    var spawned: [@Sendable () async -> [DaemonInput]] = []
    /// Store writes, StartNotify calls and start-up adoptions gathered to be
    /// carried out together (see ``RestoreBatch``).
    var batch = RestoreBatch()
    /// Store commits in flight, and by ticket their requests and who waits.
    let commits = CommitPipeline()
    var inFlight: [UInt64: InFlightCommit] = [:]
    /// Outcomes of the commits ``commitNow(_:)`` waits for, by ticket.
    var commitOutcomes: [UInt64: Result<StoreCommit, StoreError>] = [:]
    public private(set) var isReady = false
    /// The last connection failure, for STATUS= (an operator's first question).
    var lastFailure: ConnectionFailure?
    /// Each intent's last failure since its last link, with when it came
    /// (for `Status`: why a link is down). Cleared when the link is up.
    var intentFailures: [ConnectionIntentID: (failure: ConnectionFailure, at: Date)] = [:]
    /// Stored rows the start-up load could not read: kept in the store, not
    /// loaded, journalled, and shown in `Status`.
    var unreadableRows: [UnreadableRow] = []
    /// The client API's view: owners, outbox positions, attached clients.
    var api = APIState()
    /// The client API's exported objects; nil until ``attach(_:)``.
    var publisher: APIPublisher?

    /// - Parameters:
    ///   - adapter: the adapter's name, e.g. `hci0`.
    /// - Throws: ``RelinkError/invalidArguments(_:)`` for a bad adapter name.
    public init(bluez: any BlueZPort, store: RelinkStore, adapter: String, logger: Logger) throws(RelinkError) {
        guard !adapter.isEmpty, adapter.utf8.count <= 32,
              adapter.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }),
              let path = try? ObjectPath("/org/bluez/\(adapter)") else {
            throw .invalidArguments("bad adapter name \(adapter.debugDescription)")
        }
        self.bluez = bluez
        self.store = store
        self.adapterName = adapter
        self.adapterPath = path
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: DaemonInput.self, bufferingPolicy: .unbounded)
        inputs = stream
        inputContinuation = DaemonInbox(continuation)
    }

    /// The BlueZ client's executor, the bus connection's I/O thread: the
    /// loop and the BlueZ client hop to each other without a task switch,
    /// and a notified value can be handled as it is read (``takeInline(_:)``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bluez.unownedExecutor }

    /// Runs the BlueZ client and the loop until cancelled. Restores every
    /// stored identifier first and publishes its objects, then calls
    /// `whenRestored` (relinkd takes its bus name there, so that no client
    /// can reach it while its identifiers are not all there yet), then
    /// `onReady` with a status summary.
    /// - Throws: `StoreError` when the store cannot be read at start-up; the
    ///   BlueZ client's errors when the bus connection fails.
    public func run(whenRestored: @Sendable () async throws -> Void = {}, onReady: @Sendable (String) -> Void = { _ in }) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            let bluez = self.bluez, continuation = self.inputContinuation
            // Straight into the loop's queue, without a forwarding task, and
            // only what the loop acts on (not, e.g., the `Value` property
            // change that comes with every notification).
            await bluez.deliverEvents { [weak self] event in
                guard Self.handles(event) else { return }
                // Called on the BlueZ client, so on this actor's executor.
                if case .mirror(.valueUpdated(let update)) = event, let self, self.assumeIsolated({ $0.takeInline(update) }) { return }
                continuation.yield(.bluez(event))
            }
            group.addTask { try await bluez.run() }
            try await bluez.waitUntilReady()
            try await startUp()
            deferStartupAutoConnect()
            startSpawned(in: &group)  // StartNotify, timers and connects of the restored intents
            isReady = true
            let publishing = clock.now
            await publishAll()
            logger.debug("client API objects published", metadata: .journal([.duration: "\(clock.now - publishing)", .identifiers: "\(identifiers.count)"]))
            try await whenRestored()
            onReady(statusSummary)
            startSpawned(in: &group)
            var pending = inputs.makeAsyncIterator()
            while true {
                loopWaiting = true
                guard let input = await pending.next() else { break }
                loopWaiting = false
                await handle(input)
                inputContinuation.handled()
                startSpawned(in: &group)
            }
            loopWaiting = false
            await flushCommits()  // values gathered but not yet committed
            group.cancelAll()
        }
    }

    private func startSpawned(in group: inout ThrowingDiscardingTaskGroup<any Error>) {
        let work = spawned
        spawned = []
        let continuation = inputContinuation
        for item in work {
            group.addTask {
                for input in await item() { continuation.yield(input) }
            }
        }
    }

    /// Test hook: makes the loop hang for `duration` (see
    /// ``DaemonInput/stallForTesting(_:)``).
    nonisolated func stallForTesting(_ duration: Duration) {
        inputContinuation.yield(.stallForTesting(duration))
    }

    /// Sends a control request to the loop and waits for its reply.
    nonisolated func submit(_ request: ControlRequest) async -> ControlReply {
        await withCheckedContinuation { reply in
            if case .terminated = inputContinuation.yield(.control(request, reply)) {
                reply.resume(returning: .failure(.failed("relinkd is stopping")))
            }
        }
    }

    /// How long after start-up the auto-connect profile the restored
    /// intents asked for is registered. Registering makes bluetoothd read
    /// relinkd's application back and probe its devices; done at once it
    /// held READY and the restored links' StartNotify calls back (75 ms for
    /// one link on the bench). A lock out of range meanwhile has its pending
    /// Connect, which covers far longer.
    static let startupAutoConnectDelay: Duration = .seconds(2)

    /// Moves the auto-connect registration start-up asked for to a timer.
    private func deferStartupAutoConnect() {
        guard autoConnect.takeRenewal() else { return }
        let clock = self.clock
        spawned.append {
            do { try await clock.sleep(for: Self.startupAutoConnectDelay) } catch { return [] }
            return [.startupAutoConnect]
        }
    }

    /// Handles a notified value at once, on the I/O thread where the BlueZ
    /// client applied it, instead of queueing it: only when the loop waits
    /// for input with nothing queued, so that the value is handled exactly
    /// where it would have been, next, with one task switch fewer
    /// (``Connection/signals(matching:inline:)``). Returns false to
    /// leave it to the queue.
    func takeInline(_ update: ValueUpdate) -> Bool {
        guard loopWaiting, isReady, inputContinuation.isDrained else { return false }
        notified(update)
        if !spawned.isEmpty || !immediate.isEmpty { inputContinuation.yield(.startSpawned) }
        return true
    }

    /// Handles one input to the end.
    func handle(_ input: DaemonInput) async {
        switch input {
        case .bluez(let event):
            await handleBlueZ(event)
        case .machine(let intent, let machineInput):
            await feed(intent, machineInput)
        case .gattCheck(let peripheral, let generation):
            await gattCheck(peripheral, generation: generation)
        case .halfOpenCheck(let device, let address):
            await halfOpenCheck(device, address)
        case .notifyDone(let notify, let issued, let failure):
            notifyDone(notify, issued, failure: failure)
        case .flushCommits:
            flushQueuedCommits()
        case .commitsDone:
            drainCommits()
        case .control(let request, let reply):
            await flushCommits()  // the call sees, and comes after, every gathered write
            let result = await handleControl(request)
            reply.resume(returning: result)
        case .api(.ack(let id, let through), let caller, let reply):
            acknowledge(id, through: through, from: caller, reply: reply)
        case .api(let request, let caller, let reply):
            await flushCommits()  // the call sees, and comes after, every gathered write
            let result = await handleAPI(request, from: caller)
            reply.resume(returning: result)
        case .startDelivery(let id, let client, let after):
            await flushCommits()  // the replay reads the store
            await startDelivery(id, to: client, after: after)
        case .outboxWindowEnded(let id):
            outboxWindowEnded(id)
        case .clientLeft(let name):
            clientLeft(name)
        case .stallForTesting(let duration):
            logger.warning("test hook: the loop stalls", metadata: ["duration": "\(duration)"])
            // Blocks this loop on purpose; nothing else runs on it meanwhile.
            try? await Task.sleep(for: duration)
        case .startSpawned:
            break
        case .startupAutoConnect:
            autoConnect.requestRenewal()
        case .renewAutoConnect(let address):
            if autoConnect.isHeld(address) {
                logger.debug("background auto-connect renewed after relinkd's Disconnect", metadata: .journal([.address: "\(address.string)"]))
                autoConnect.requestRenewal()
            }
        }
        await drainImmediate()
        await flushAutoConnect()
    }

    /// Feeds a machine one input and carries out its actions.
    func feed(_ intent: ConnectionIntentID, _ input: Machine.Input) async {
        guard var machine = machines[intent] else { return }
        let actions = machine.handle(input)
        machines[intent] = machine
        await perform(actions, for: intent)
    }

    func drainImmediate() async {
        while !immediate.isEmpty {
            let (intent, input) = immediate.removeFirst()
            await feed(intent, input)
        }
    }

    /// One line for `STATUS=`: how many identifiers and links.
    public var summary: String { statusSummary }

    var statusSummary: String {
        let connected = machines.values.filter { if case .connected = $0.state { true } else { false } }.count
        var summary = "\(identifiers.count) identifiers, \(connected)/\(machines.count) links up, scanning: \(scans.isScanning)"
        if let lastFailure { summary += ", last error: \(lastFailure)" }
        return summary
    }

    func peripheralID(for address: BluetoothAddress) -> PeripheralID? { peripheralByAddress[address.string] }

    /// Machines of intents for a peripheral, in intent order.
    func intents(of peripheral: PeripheralID) -> [ConnectionIntentID] {
        machines.keys.filter { $0.peripheral == peripheral }.sorted()
    }

    /// The identifiers with an intent or a subscription on a peripheral, sorted.
    func interestedIdentifiers(in peripheral: PeripheralID) -> [RestoreIdentifier] {
        Set(machines.keys.filter { $0.peripheral == peripheral }.map(\.identifier))
            .union(planner.subscriptions.filter { $0.peripheral == peripheral }.map(\.identifier)).sorted()
    }
}

/// A connection state machine on the daemon's clock.
typealias Machine = ConnectionStateMachine<ContinuousClock>
