public import BlueZ
import DBus
import Foundation
public import Logging
public import RelinkStore
import DaemonCore
import Restoration
public import RelinkModel
public import RelinkAPI

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
    /// What the daemon works with: the BlueZ port, the store, its adapter,
    /// its logger and clock.
    nonisolated let env: DaemonEnvironment
    nonisolated let inputs: AsyncStream<DaemonInput>
    nonisolated let inputContinuation: DaemonInbox
    /// Where the auto-connect GATT application is exported.
    static let autoConnectRoot: ObjectPath = {
        do { return try ObjectPath("/org/relink/autoconnect") } catch { preconditionFailure("constant path") }
    }()

    /// The machines and the core's policies: what relinkd decides with.
    var core = DaemonCore<DaemonClock>()
    /// What relinkd knows of each peripheral.
    var known = PeripheralIndex()
    /// The loop's own bookkeeping: whether it waits, what runs next.
    var loop = LoopState()
    /// Store writes gathered, in flight, and their outcomes.
    var writes = WriteState()
    /// Failures an operator asks about (`STATUS=`, `Status`).
    var health = HealthLog()
    /// The client API's view: owners, outbox positions, attached clients.
    var api = APIState()
    /// Streams of writes without response, and each link's write limits.
    var writeStreams = WriteStreamTable()
    /// The client API's exported objects; nil until ``attach(_:)``.
    var publisher: APIPublisher?
    /// The peripheral role: hosted applications, requests waiting for programs.
    var peripheralRole = PeripheralRoleState()

    /// The BlueZ port.
    var bluez: any BlueZPort { env.bluez }
    /// The store.
    var store: RelinkStore { env.store }
    /// The adapter's object path.
    var adapterPath: ObjectPath { env.adapterPath }
    /// The adapter's name (`hci0`).
    var adapterName: String { env.adapterName }
    /// The logger.
    var logger: Logger { env.logger }
    /// The clock of the machines and timers.
    var clock: DaemonClock { env.clock }
    /// The per-user bounds (relinkd.conf); root has none.
    var bounds: UserBounds { env.bounds }
    /// True once restoring after start-up is complete.
    public var isReady: Bool { loop.isReady }

    /// - Parameters:
    ///   - adapter: the adapter's name, e.g. `hci0`.
    ///   - clock: the machines' and timers' clock; real time unless a test moves it.
    ///   - launcher: how programs are started for their launch spec (nil: none is).
    ///   - bounds: what each user but root may keep in relinkd (docs/relinkd-conf.md).
    /// - Throws: `InvalidArguments` for a bad adapter name.
    public init(bluez: any BlueZPort, store: RelinkStore, adapter: String, logger: Logger,
                clock: DaemonClock = .continuous, launcher: (any ProgramLauncher)? = nil,
                bounds: UserBounds = .defaults) throws(RelinkError) {
        guard !adapter.isEmpty, adapter.utf8.count <= 32,
              adapter.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }),
              let path = try? ObjectPath("/org/bluez/\(adapter)") else {
            throw RelinkError(.invalidArguments, "bad adapter name \(adapter.debugDescription)")
        }
        self.env = DaemonEnvironment(bluez: bluez, store: store, adapterPath: path, adapterName: adapter, logger: logger, clock: clock, launcher: launcher,
                                       bounds: bounds)
        core.relaunch.enabled = launcher != nil
        let (stream, continuation) = AsyncStream.makeStream(of: DaemonInput.self, bufferingPolicy: .unbounded)
        inputs = stream
        inputContinuation = DaemonInbox(continuation)
    }

    /// The BlueZ client's executor, the bus connection's I/O thread: the
    /// loop and the BlueZ client hop to each other without a task switch,
    /// and a notified value can be handled as it is read (``takeInline(_:)``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { env.bluez.unownedExecutor }

    /// A step of start-up that has ended (``run(holdingStartUp:whenRestored:onStartUpStep:onReady:)``).
    public enum StartUpStep: String, Sendable {
        /// bluetoothd's objects were read (or it was found missing or hung).
        case bluetoothdRead = "bluetoothd read"
        /// Every stored identifier and intent is restored.
        case storeRestored = "store restored"
        /// Every identifier's objects are on the bus connection.
        case published
    }

    /// Runs the BlueZ client and the loop until cancelled. Restores every
    /// stored identifier first and publishes its objects, then calls
    /// `whenRestored` (relinkd takes its bus name there, so that no client
    /// can reach it while its identifiers are not all there yet), then
    /// `onReady` with a status summary.
    ///
    /// Cancelled during start-up (SIGTERM), it stops restoring at the next
    /// identifier's intent and returns without `whenRestored` and `onReady`.
    /// - Parameters:
    ///   - hold: test hook: start-up waits this long (or until
    ///     cancelled) before the store is loaded, as a slow start-up with a
    ///     large store would take (relinkd: `RELINK_TEST_HOLD_STARTUP`).
    ///   - onStartUpStep: called as each step of start-up ends, before
    ///     `whenRestored` (relinkd gives systemd more time there).
    /// - Throws: `StoreError` when the store cannot be read at start-up; the
    ///   BlueZ client's errors when the bus connection fails.
    public func run(holdingStartUp hold: Duration? = nil, whenRestored: @Sendable () async throws -> Void = {},
                    onStartUpStep: @Sendable (StartUpStep) -> Void = { _ in },
                    onReady: @Sendable (String) -> Void = { _ in }) async throws {
        defer { stopTimers() }  // however the loop ends: the one sleeping timer task is not the group's
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
            await bluez.setHostedRequestHandler { [weak self] root, request in
                await self?.submitHosted(root, request) ?? .error(.unlikelyError)
            }
            group.addTask { try await bluez.run() }
            // The first read of bluetoothd's objects ends within about 17 s
            // whatever bluetoothd does: at once when it is not on the bus,
            // after its retries (6.35 s) while it is not exporting yet,
            // after 10 s without a reply when it is hung (then relinkd
            // starts without it and asks again every 15 s).
            try await bluez.waitUntilReady(timeout: .seconds(30))
            if !Task.isCancelled { onStartUpStep(.bluetoothdRead) }  // after SIGTERM, no more start-up time
            if let hold {
                logger.warning("test hook: start-up held", metadata: ["duration": "\(hold)"])
                try? await Task.sleep(for: hold)
            }
            // Stopped during start-up: no more restoring, no bus name, no READY.
            guard !Task.isCancelled else { group.cancelAll(); return }
            try await startUp()
            guard !Task.isCancelled else { group.cancelAll(); return }
            onStartUpStep(.storeRestored)
            deferStartupAutoConnect()
            startSpawned(in: &group)  // StartNotify, timers and connects of the restored intents
            loop.isReady = true
            let publishing = clock.now
            await publishAll()
            guard !Task.isCancelled else { group.cancelAll(); return }
            await hostAll(reason: "start-up")  // before the bus name: before any client is back
            logger.debug("client API objects published", metadata: .journal([.duration: "\(clock.now - publishing)", .identifiers: "\(core.identifiers.count)"]))
            if !Task.isCancelled { onStartUpStep(.published) }
            try await whenRestored()
            guard !Task.isCancelled else { group.cancelAll(); return }
            await openRelaunch()  // reachable now: a program started from here on can register
            onReady(statusSummary)
            startSpawned(in: &group)
            var pending = inputs.makeAsyncIterator()
            while true {
                loop.waiting = true
                guard let input = await pending.next() else { break }
                loop.waiting = false
                await handle(input)
                inputContinuation.handled()
                startSpawned(in: &group)
            }
            loop.waiting = false
            storeTransferOffsets()
            await flushCommits()  // values gathered but not yet committed
            group.cancelAll()
        }
    }

    private func startSpawned(in group: inout ThrowingDiscardingTaskGroup<any Error>) {
        armTimers()
        let work = loop.spawned.take()
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

    /// Sends a control request to the loop and waits for its reply;
    /// `queued` runs as soon as the request is in the loop's inbox.
    nonisolated func submit(_ request: ControlRequest, queued: (@Sendable () -> Void)? = nil) async -> ControlReply {
        await withCheckedContinuation { reply in
            if case .terminated = inputContinuation.yield(.control(request, reply)) {
                reply.resume(returning: .failure(RelinkError(.failed, "relinkd is stopping")))
            }
            queued?()
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
        guard core.autoConnect.takeRenewal() else { return }
        input(.startupAutoConnect, after: Self.startupAutoConnectDelay)
    }

    /// Handles a notified value at once, on the I/O thread where the BlueZ
    /// client applied it, instead of queueing it: only when the loop waits
    /// for input with nothing queued, so that the value is handled exactly
    /// where it would have been, next, with one task switch fewer
    /// (``Connection/signals(matching:inline:)``). Returns false to
    /// leave it to the queue.
    func takeInline(_ update: ValueUpdate) -> Bool {
        guard loop.waiting, isReady, inputContinuation.isDrained else { return false }
        notified(update)
        armTimers()
        if !loop.spawned.isEmpty || !loop.immediate.isEmpty { inputContinuation.yield(.startSpawned) }
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
            await perform(core.handle(.gattGraceEnded(peripheral, generation: generation)))
        case .halfOpenCheck(let device, let address):
            await halfOpenCheck(device, address)
        case .notifyDone(let notify, let issued, let failure):
            await notifyDone(notify, issued, failure: failure)
        case .flushCommits:
            flushQueuedCommits()
        case .commitsDone:
            drainCommits()
            await transfersCommitted()
        case .control(let request, let reply):
            await flushCommits()  // the call sees, and comes after, every gathered write
            let result = await handleControl(request)
            reply.resume(returning: result)
        case .status(let answer):
            // The loop's own state, not the store's: no flush, constant time.
            answer.answer(currentStatus)
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
            await clientLeft(name)
        case .stallForTesting(let duration):
            logger.warning("test hook: the loop stalls", metadata: ["duration": "\(duration)"])
            // Blocks this loop on purpose; nothing else runs on it meanwhile.
            try? await Task.sleep(for: duration)
        case .startSpawned:
            break
        case .timersDue:
            await timersDue()
        case .startupAutoConnect:
            core.autoConnect.requestRenewal()
        case .renewAutoConnect(let address):
            if core.autoConnect.isHeld(address) {
                logger.debug("background auto-connect renewed after relinkd's Disconnect", metadata: .journal([.address: "\(address.string)"]))
                core.autoConnect.requestRenewal()
            }
        case .gattDatabaseSettled(let peripheral, let generation):
            await perform(core.handle(.gattSettled(peripheral, generation: generation)))
        case .peripheralRole(let input):
            await handlePeripheralRole(input)
        case .relaunch(let input):
            relaunchInput(input)
        case .transfer(let input):
            await handleTransfer(input)
        case .pairingRequest(let id, let peripheral, let number, let request, let reply):
            reply.resume(returning: pairingRequestForwarded(id, peripheral, number, request))
        }
        await drainImmediate()
        await flushAutoConnect()
    }

    /// Feeds a machine one input and carries out its actions.
    func feed(_ intent: ConnectionIntentID, _ input: Machine.Input) async {
        await perform(core.handle(.machine(intent, input)))
    }

    /// The peripheral's current link carried a notified value or a
    /// StartNotify reply: its intents hear it once per link, so that a short
    /// link that worked is not taken for one that fails at once
    /// (``ConnectionStateMachine/linkCarried()``). Constant time on the
    /// value path after the first value of a link.
    func linkCarried(_ peripheral: PeripheralID) {
        queue(core.handle(.linkCarried(peripheral)))
    }

    func drainImmediate() async {
        while !loop.immediate.isEmpty {
            let (intent, input) = loop.immediate.removeFirst()
            await feed(intent, input)
        }
    }

    /// One line for `STATUS=`: how many identifiers and links.
    public var summary: String { statusSummary }

    var statusSummary: String {
        // A link that is up but carries nothing for a subscription (gateway
        // finding G8) is not "up" to an operator: say how many.
        var connected = 0, unarmed = 0
        for (intent, machine) in core.machines where machine.state.isLinkUp {
            connected += 1
            unarmed += core.planner.unarmed(of: intent.peripheral, for: intent.identifier).count
        }
        var summary = "\(core.identifiers.count) identifiers, \(connected)/\(core.machines.count) links up, scanning: \(core.scans.isScanning)"
        if unarmed > 0 { summary += ", \(unarmed) subscription(s) not armed" }
        // Why every link is down, when the adapter is (bluetoothd gone or
        // hung, the adapter off, blocked or unplugged).
        if let adapter = core.adapter.current, adapter.state != .poweredOn {
            summary += ", adapter \(adapterName): \(adapter.state.rawValue)"
        }
        // The newest failure of a link that is down now: a fault that has
        // since cleared (the link came back, the intent was cancelled) is
        // not shown as a current one.
        var newest: (failure: ConnectionFailure, at: Date)?
        for (intent, entry) in health.intentFailures where entry.at > (newest?.at ?? .distantPast) {
            guard let machine = core.machines[intent], !machine.state.isLinkUp else { continue }
            newest = entry
        }
        if let newest { summary += ", last error: \(newest.failure)" }
        return summary
    }

    func peripheralID(for address: BluetoothAddress) -> PeripheralID? { known.peripheralByAddress[address.string] }

    /// Machines of intents for a peripheral, in intent order.
    func intents(of peripheral: PeripheralID) -> [ConnectionIntentID] { core.intents(of: peripheral) }

    /// The identifiers with an intent or a subscription on a peripheral, sorted.
    func interestedIdentifiers(in peripheral: PeripheralID) -> [RestoreIdentifier] { core.interestedIdentifiers(in: peripheral) }
}

/// A connection state machine on the daemon's clock.
typealias Machine = DaemonCore<DaemonClock>.Machine
