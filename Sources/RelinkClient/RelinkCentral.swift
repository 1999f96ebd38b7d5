import RelinkAPI
import DBus
public import RelinkModel

/// A central with a restore identifier, like a `CBCentralManager` created
/// with `CBCentralManagerOptionRestoreIdentifierKey`, whose work relinkd
/// keeps alive across restarts of this program and of relinkd.
///
/// ```swift
/// let central = RelinkCentral(restoreIdentifier: "front-door", bus: .system)
/// let restored = try await central.connect()        // willRestoreState: comes first
/// for p in restored.peripherals where p.state != "connected" { ... }
/// try await central.connect(peripheral: "00:00:00:00:00:02", options: .init(services: [lockService]))
/// try await central.subscribe(peripheral: "00:00:00:00:00:02", service: lockService, characteristic: lockState)
/// for await event in central.events {
///     handle(event)                                   // replayed events first, then live ones, in order
///     try await central.acknowledge(through: event.sequence)
/// }
/// ```
///
/// `examples/swift-band` in the repository is a complete program (a package
/// of its own that depends on relink), built and run against the bench in CI.
///
/// ``events`` yields each event once per `RelinkCentral`, in sequence
/// order: the stored events not yet acknowledged (replayed by relinkd
/// after `Register`), then live ones. An event that is not acknowledged
/// is delivered again to the next `RelinkCentral` of the identifier (after
/// a crash of this program), so acknowledge only what was processed.
///
/// When relinkd restarts (it leaves the bus and comes back), a central
/// made with `reattach: true` (the default) registers again by itself:
/// ``restoredState`` is replaced by the new restored state,
/// ``reattachments`` grows, and ``events`` goes on with the events not
/// yet handed out. With `reattach: false`, or when registering again
/// fails, ``events`` finishes; it also finishes on ``close()``.
///
/// Every method throws ``RelinkClientError``; `InvalidArguments` is
/// thrown before anything is sent when an argument breaks relinkd's rules,
/// ``RelinkClientError/isUnreachable`` tells that relinkd could not be
/// reached, and `NotConnected` that ``connect(options:)`` was not called
/// (or failed).
public actor RelinkCentral {
    /// The restore identifier this central registers and restores, as given.
    public nonisolated let restoreIdentifier: String
    /// The bus ``connect(options:)`` connects to, where relinkd is.
    public nonisolated let bus: RelinkBus
    /// Events of the identifier, in sequence order, each once. Nothing is
    /// yielded before ``connect(options:)`` returned the restored state.
    /// At most `eventBuffer` events are held for the program; one that
    /// falls behind loses nothing (``RelinkEvents``).
    public nonisolated let events: RelinkEvents
    private let buffer: RelinkEventBuffer
    private var eventProgress: RelinkEventProgress?
    /// How many times the program fell behind: ``events``' buffer was full,
    /// and the events it missed were fetched again from relinkd.
    public var timesFellBehind: Int { eventProgress?.episodes ?? 0 }
    private var manager: RelinkManager?
    private var pump: Task<Void, Never>?
    /// The state `connect(options:)` returned, or the one of the latest
    /// registration after relinkd restarted.
    public private(set) var restoredState: RelinkRestoredState?
    /// How many times the central registered again after relinkd restarted.
    public private(set) var reattachments = 0
    /// Whether to register again when relinkd comes back after leaving the bus.
    public nonisolated let reattach: Bool
    /// How long a call cut by relinkd's departure waits for this central to
    /// register again before the call's own error is thrown
    /// (``acknowledge(through:)``).
    public static let reattachWait: Duration = .seconds(30)
    /// Calls waiting for the next registration after relinkd came back, by
    /// ticket; each is resumed once: true when the central registered
    /// again, false when it will not (closed, the events finished, the
    /// wait's bound, the task cancelled).
    private var reattachWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var nextTicket = 0
    private var eventsEnded = false
    /// The identifier's object path, once registered.
    public private(set) var objectPath: String?

    /// A central for `restoreIdentifier`; nothing is sent until ``connect(options:)``.
    /// - Parameters:
    ///   - reattach: register again by itself when relinkd restarts.
    ///   - eventBuffer: the most events ``events`` holds for the program
    ///     (at least 2; the default, 1,024, is about 1 MiB of small events).
    public init(restoreIdentifier: String, bus: RelinkBus = .system, reattach: Bool = true, eventBuffer: Int = 1_024) {
        self.restoreIdentifier = restoreIdentifier
        self.bus = bus
        self.reattach = reattach
        buffer = RelinkEventBuffer(limit: eventBuffer)
        events = RelinkEvents(buffer: buffer)
    }

    /// Creates a central and registers it (``connect(options:)``).
    /// - Throws: as ``connect(options:)``.
    public static func register(restoreIdentifier: String, bus: RelinkBus = .system, reattach: Bool = true,
                                options: RelinkRegisterOptions = .init()) async throws(RelinkClientError) -> (RelinkCentral, RelinkRestoredState) {
        let central = RelinkCentral(restoreIdentifier: restoreIdentifier, bus: bus, reattach: reattach)
        let state = try await central.connect(options: options)
        return (central, state)
    }

    /// Registers the identifier with relinkd (`Manager1.Register`) and
    /// attaches to it: returns its restored state, then ``events`` starts
    /// yielding (replayed events first when `options.replay`).
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (bad identifier),
    ///   `NotPermitted` (another user's identifier), `StoreFailed`,
    ///   `AlreadyExists` when already connected; unreachable.
    public func connect(options: RelinkRegisterOptions = .init()) async throws(RelinkClientError) -> RelinkRestoredState {
        guard manager == nil else { throw RelinkClientError(.alreadyExists, "This central is already connected to relinkd.") }
        try RelinkArguments.checkIdentifier(restoreIdentifier)
        let manager = try await RelinkManager.connect(to: bus)
        do throws(RelinkClientError) {
            // Subscribe first: relinkd sends the first Event right after the reply.
            let signals = try await manager.eventSignals()
            let owners = try await manager.relinkdOwnerChanges()
            let (path, state) = try await manager.register(restoreIdentifier, options: options)
            self.manager = manager
            self.restoredState = state
            self.objectPath = path.rawValue
            let pump = RelinkEventPump(manager: manager, identifier: restoreIdentifier, options: options,
                                       path: path.rawValue, reattach: reattach)
            let onReattach: @Sendable (RelinkRestoredState) async -> Void = { [weak self] state in await self?.reattached(state) }
            let progress = RelinkEventProgress(after: state.acknowledged)
            eventProgress = progress
            self.pump = Task { [buffer, weak self] in
                await pump.run(signals: signals, owners: owners, progress: progress, to: buffer, onReattach: onReattach)
                await self?.endWaits()
            }
            return state
        } catch {
            manager.close()
            throw error
        }
    }

    private func reattached(_ state: RelinkRestoredState) {
        restoredState = state
        reattachments += 1
        for waiter in reattachWaiters.values { waiter.resume(returning: true) }
        reattachWaiters.removeAll()
    }

    /// No registration will come any more: every waiting call gets its error.
    private func endWaits() {
        eventsEnded = true
        for waiter in reattachWaiters.values { waiter.resume(returning: false) }
        reattachWaiters.removeAll()
    }

    private func endWait(_ ticket: Int) {
        reattachWaiters.removeValue(forKey: ticket)?.resume(returning: false)
    }

    /// Whether this central registered again after `generation` (its
    /// ``reattachments`` when the cut call was sent), waiting for it at most
    /// ``reattachWait``. False at once without `reattach`, after
    /// ``close()`` and once ``events`` ended.
    private func registeredAgain(since generation: Int) async -> Bool {
        if reattachments > generation { return true }
        guard reattach, manager != nil, !eventsEnded else { return false }
        let ticket = nextTicket
        nextTicket += 1
        let bound = Task { [weak self] in
            try? await Task.sleep(for: Self.reattachWait)
            await self?.endWait(ticket)
        }
        defer { bound.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
                if Task.isCancelled { waiter.resume(returning: false) } else { reattachWaiters[ticket] = waiter }
            }
        } onCancel: {
            Task { [weak self] in await self?.endWait(ticket) }
        }
    }

    /// Detaches from relinkd and finishes ``events``. The identifier and
    /// its work stay in relinkd.
    public func close() {
        pump?.cancel()
        manager?.close()
        manager = nil
        buffer.finish()
        endWaits()
    }

    func connected() throws(RelinkClientError) -> RelinkManager {
        guard let manager else { throw RelinkClientError(.notConnected, "The central is not connected to relinkd: call connect() first.") }
        return manager
    }

    /// Starts (or replaces) the identifier's scan.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `NotReady`, `StoreFailed`, `NotConnected`; unreachable.
    public func scan(services: [String], options: RelinkScanOptions = .init()) async throws(RelinkClientError) {
        try await connected().scan(restoreIdentifier, services: services, options: options)
    }

    /// Stops the identifier's scan.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`, `StoreFailed`, `NotConnected`; unreachable.
    public func stopScan() async throws(RelinkClientError) {
        try await connected().stopScan(restoreIdentifier)
    }

    /// Adds a durable connection intent.
    /// - Parameter peripheral: an address `AA:BB:CC:DD:EE:FF` or a peripheral UUID.
    /// - Returns: the peripheral UUID (from its object path) or the object path when it has no UUID form.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `AlreadyExists`, `StoreFailed`, `NotConnected`; unreachable.
    @discardableResult
    public func connect(peripheral: String, options: RelinkConnectOptions = .init()) async throws(RelinkClientError) -> String {
        let path = try await connected().connect(restoreIdentifier, peripheral: peripheral, options: options)
        return APIPath.peripheralUUID(of: path) ?? path.rawValue
    }

    /// Ends a connection intent and the subscriptions on that peripheral.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `StoreFailed`, `NotConnected`; unreachable.
    public func cancel(peripheral: String) async throws(RelinkClientError) {
        try await connected().cancel(restoreIdentifier, peripheral: peripheral)
    }

    /// Subscribes to a characteristic (re-armed after every reconnection).
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `UnknownCharacteristic` (the link is up and the peripheral has no such characteristic),
    ///   `AlreadyExists`, `StoreFailed`, `NotConnected`; unreachable.
    public func subscribe(peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) {
        try await connected().subscribe(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic)
    }

    /// Ends a subscription.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `StoreFailed`, `NotConnected`; unreachable.
    public func unsubscribe(peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) {
        try await connected().unsubscribe(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic)
    }

    /// Reads a characteristic over the live link.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `UnknownCharacteristic`, `NotConnected` (no link, or central not connected), `NotSupported`, `Failed`; unreachable.
    public func read(peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) -> [UInt8] {
        try await connected().read(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic)
    }

    /// Writes a characteristic over the live link (at most 512 bytes).
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `UnknownCharacteristic`, `NotConnected`, `NotSupported`, `Failed`; unreachable.
    public func write(peripheral: String, service: String, characteristic: String, value: [UInt8],
                      withResponse: Bool = true) async throws(RelinkClientError) {
        try await connected().write(restoreIdentifier, peripheral: peripheral, service: service, characteristic: characteristic,
                                    value: value, withResponse: withResponse)
    }

    /// Marks every event up to `sequence` as processed; relinkd deletes them.
    ///
    /// A program acknowledges after every event, so a restart of relinkd
    /// often cuts this call. Acknowledging is idempotent: when relinkd
    /// leaves the bus before it answered and the central registers again
    /// by itself (`reattach`), the call is sent once more to the new relinkd
    /// (waiting at most ``reattachWait``) instead of failing; the program's
    /// event loop goes on as if relinkd had not restarted.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (beyond the last
    ///   stored sequence), `UnknownIdentifier`, `StoreFailed`, `NotConnected`;
    ///   unreachable (without `reattach`, or when relinkd is not back and
    ///   registered with in time).
    public func acknowledge(through sequence: UInt64) async throws(RelinkClientError) {
        let manager = try connected()
        let generation = reattachments
        do {
            try await manager.acknowledge(restoreIdentifier, through: sequence)
        } catch {
            guard error.isUnreachable, await registeredAgain(since: generation) else { throw error }
            try await connected().acknowledge(restoreIdentifier, through: sequence)
        }
    }

    /// Stored events with sequence > `after` (at most `max`), without
    /// touching ``events``.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func storedEvents(after: UInt64, max: UInt32 = RelinkArguments.maximumEvents) async throws(RelinkClientError) -> [RelinkClientEvent] {
        try await connected().events(restoreIdentifier, after: after, max: max)
    }

    /// The peripherals this caller may see, with their properties.
    /// - Throws: ``RelinkClientError``: `NotConnected`; unreachable.
    public func peripherals() async throws(RelinkClientError) -> [RelinkPeripheral] {
        try await connected().peripherals()
    }

    /// The state and roles of relinkd's adapter now (CoreBluetooth's
    /// `central.state`); changes come as `adapter-state` events.
    /// - Throws: ``RelinkClientError``: `NotConnected`; unreachable.
    public func adapterStatus() async throws(RelinkClientError) -> AdapterStatus? {
        try await connected().adapterStatus()
    }

    /// The identifier's `Central1` properties (counters, scan).
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`, `NotConnected`; unreachable.
    public func properties() async throws(RelinkClientError) -> RelinkCentralProperties {
        try await connected().centralProperties(restoreIdentifier)
    }

    /// Deletes the identifier in relinkd (cancels its scan, intents,
    /// subscriptions and outbox), then ``close()``s.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`, `StoreFailed`, `NotConnected`; unreachable.
    public func forget() async throws(RelinkClientError) {
        try await connected().unregister(restoreIdentifier)
        close()
    }
}
