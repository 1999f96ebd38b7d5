public import DBus
public import Logging
import struct Foundation.Date
public import RelinkModel

/// The BlueZ layer: a live mirror of `org.bluez` and the operations a
/// central needs, over one D-Bus connection.
///
/// Create it, call ``run()`` (which returns when cancelled or when the
/// connection closes), and read ``events``. Signals from bluetoothd are
/// applied in bus order by one loop; `NameOwnerChanged` for `org.bluez`
/// (the only reliable sign of a bluetoothd restart: a crash sends no
/// InterfacesRemoved) drops and rebuilds the mirror.
public actor BlueZClient {
    public nonisolated let connection: Connection
    let logger: Logger
    /// Ordered events for upper layers (unbounded: nothing is dropped),
    /// unless a sink takes them (``deliverEvents(to:)``).
    public nonisolated let events: AsyncStream<BlueZEvent>
    let continuation: AsyncStream<BlueZEvent>.Continuation
    /// Where events go instead of ``events``, if set.
    private var sink: (@Sendable (BlueZEvent) -> Void)?

    /// The current copy of bluetoothd's object tree.
    public internal(set) var mirror = Mirror()
    /// The unique name of the current bluetoothd, if any.
    public internal(set) var owner: String?
    /// Discovery wanted per adapter, re-applied after resets and power-ups.
    var wantedDiscovery: [ObjectPath: DiscoveryFilter] = [:]
    /// Adapters on which the current bluetoothd accepted relink's
    /// `StartDiscovery` (a discovery session of this client), until it is
    /// stopped, the adapter powers off or bluetoothd goes.
    var discoverySessions: Set<ObjectPath> = []
    /// Adapters reported off (``BlueZEvent/adapterPowered(_:_:)``) at
    /// `PowerState` `on-disabling`, whose `Powered` is still true: their
    /// `Powered` false is not reported a second time (``deliver(_:)``).
    var goingOff: Set<ObjectPath> = []
    /// Adapters whose refused discovery start is being retried.
    var discoveryRetries: Set<ObjectPath> = []
    /// Service UUIDs of the auto-connect profile, re-registered after resets.
    var autoConnect: AutoConnectProfile?
    /// The bluetoothd (unique name) and adapter each successful
    /// registration of the auto-connect profile went to, in order.
    public internal(set) var autoConnectRegistrations: [(owner: String?, adapter: ObjectPath)] = []
    var waiters: [Waiter] = []
    /// The GATT applications and advertisements hosted for the peripheral role.
    var hosting = HostingState()
    /// Per device, how many times the mirror saw `Connected` become true:
    /// lets ``connect(_:timeout:)`` tell "not seen yet" from "up and
    /// already down again" (a method reply can overtake the signals sent
    /// before it, which take the signal loop's path).
    var linkUps: [ObjectPath: UInt64] = [:]
    /// Devices whose exported GAP Device Name should be read, drained by
    /// one child task of ``run()`` so the signal loop never waits on it.
    let gapReads: AsyncStream<ObjectPath>
    let gapReadRequests: AsyncStream<ObjectPath>.Continuation
    private(set) var isReady = false
    /// True while the bus refuses relinkd's calls to bluetoothd
    /// (`AccessDenied`): ``run()`` asks again every ``recheck``
    /// (a reloaded D-Bus policy is not signalled).
    var refused = false
    /// True while bluetoothd holds `org.bluez` but did not answer the last
    /// `GetManagedObjects` in time (hung, e.g. stuck in the kernel):
    /// ``run()`` asks again every ``recheck``, since a bluetoothd that
    /// comes unstuck sends no signal saying so.
    var unanswered = false
    /// The adapters upper layers watch (``watchAdapter(_:)``).
    private var adapterStatus = AdapterStatusReporter()
    private var waiterCounter: UInt64 = 0
    /// True while the mirror is being rebuilt from `GetManagedObjects`.
    var resyncing = false
    /// Signals that arrived while resyncing or from a sender that is not
    /// the current bluetoothd: applied after the rebuild if they are newer
    /// than the snapshot (bluetoothd's serials only grow), else dropped,
    /// since the snapshot already holds their effect.
    var heldSignals: [Message] = []
    static let heldSignalLimit = 100_000

    /// The connection's I/O thread: signals are applied there, most of
    /// them as soon as they are read (``applyInline(_:)``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }

    /// How often ``run()`` asks bluetoothd again while the bus refuses
    /// relinkd's calls or bluetoothd does not answer them.
    let recheck: Duration
    /// How long `GetManagedObjects` may take before bluetoothd counts as
    /// not answering.
    let readTimeout: Duration

    /// A client on `connection`; `recheck`: how often to ask bluetoothd
    /// again while the bus refuses relinkd's calls or bluetoothd does not
    /// answer them (15 s); `readTimeout`: how long reading bluetoothd's
    /// objects may take before it counts as not answering (10 s).
    public init(connection: Connection, logger: Logger = Logger(label: "relink.bluez"), recheck: Duration = .seconds(15),
                readTimeout: Duration = .seconds(10)) {
        self.connection = connection
        self.logger = logger
        self.recheck = recheck
        self.readTimeout = readTimeout
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (gapReads, gapReadRequests) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Follows bluetoothd until cancelled or until the connection closes.
    /// Builds the mirror first; callers may use the client once
    /// ``waitUntilReady()`` returns.
    /// - Throws: ``DBusError`` when the connection fails.
    public func run() async throws {
        // Subscribe before reading the tree, so nothing between is missed.
        let signals = try await connection.signals(matching: SignalMatch(sender: BlueZInterface.service)) { [weak self] message in
            guard let self else { return false }
            return self.assumeIsolated { $0.applyInline(message) }
        }
        let owners = try await connection.nameOwnerChanges(for: BlueZInterface.service)
        await resync(reason: .initial)
        isReady = true
        resumeWaiters()
        defer { continuation.finish() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for try await message in signals { await self.apply(message) }
            }
            group.addTask { [self] in
                for try await change in owners { await self.ownerChanged(change.newOwner) }
            }
            group.addTask { [self] in
                for await device in gapReads { await self.readGAPName(of: device) }
            }
            group.addTask { [self] in
                // A D-Bus policy change, or a hung bluetoothd coming
                // unstuck, comes with no signal: ask again.
                while true {
                    try await Task.sleep(for: recheck)
                    await self.recheckIfUnread()
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Hands every later event to `sink`, in order, on this actor, instead
    /// of yielding it to ``events``: one task switch fewer per event for a
    /// consumer that queues them itself (relinkd's loop). Call it before
    /// ``run()``; events already yielded stay in ``events``.
    public func deliverEvents(to sink: @escaping @Sendable (BlueZEvent) -> Void) {
        self.sink = sink
    }

    func emit(_ event: BlueZEvent) {
        if let sink { sink(event) } else { continuation.yield(event) }
        for change in adapterStatus.events(after: event, mirror: mirror, bluetoothd: bluetoothdPresence) {
            if let sink { sink(change) } else { continuation.yield(change) }
        }
    }

    /// Whether bluetoothd is on the bus and answers relinkd.
    public var bluetoothdPresence: BluetoothdPresence {
        refused ? .refused : owner == nil ? .absent : .present
    }

    /// Gives the mirror the names known of devices from before (``Mirror/learnNames(_:)``).
    public func learnNames(_ names: [ObjectPath: DeviceNames]) {
        mirror.learnNames(names)
    }

    /// Starts reporting the status of the adapter at `path`
    /// (``BlueZEvent/adapterStatus(_:_:)``); returns its status now.
    public func watchAdapter(_ path: ObjectPath) -> AdapterStatus {
        adapterStatus.watch(path, mirror: mirror, bluetoothd: bluetoothdPresence)
    }

    /// Returns once ``run()`` has built the first mirror.
    public func waitUntilReady(timeout: Duration = .seconds(10)) async throws {
        try await wait(timeout: timeout, "the first mirror") { _ in true }
    }

    func nextWaiterID() -> UInt64 {
        waiterCounter += 1
        return waiterCounter
    }

    // MARK: Applying signals

    /// Reads the GAP Device Name where bluetoothd exports it (BlueZ ≥ 5.80
    /// or the bench's default); a failure only means the name stays
    /// inferred from `Name`.
    func readGAPName(of device: ObjectPath) async {
        guard let c = mirror.services(of: device).first(where: { $0.uuid == GAP.serviceUUID })
            .flatMap({ mirror.characteristics(of: $0.path).first { $0.uuid == GAP.deviceNameUUID } }) else { return }
        do {
            let value = try await read(c.path)
            for event in mirror.gapNameRead(characteristic: c.path, value: value) { emit(.mirror(event)) }
        } catch {
            logger.debug("GAP name read failed", metadata: ["device": "\(device)", JournalField.error.rawValue: "\(error)"])
        }
    }

    /// Applies a signal from bluetoothd, or holds it while the mirror is
    /// being rebuilt or when it does not come from the current bluetoothd.
    func apply(_ message: Message) async {
        guard resyncing || owner == nil || message.sender != owner else {
            await applyNow(message)
            return
        }
        if heldSignals.count >= Self.heldSignalLimit {
            heldSignals.removeFirst(heldSignals.count / 2)
            logger.warning("too many signals while bluetoothd's objects are unreadable; dropped the older half",
                           metadata: .journal([.event: "bluez-signals-dropped"]))
        }
        heldSignals.append(message)
    }

    /// Applies a signal on the I/O thread as it is read, without a task
    /// switch, when that is the same as applying it in the signal loop:
    /// the mirror is not being rebuilt, it comes from the current
    /// bluetoothd, and it is a `PropertiesChanged` (not of an adapter,
    /// whose power-up re-registers what bluetoothd forgot and must wait for
    /// it). The connection offers it only when nothing earlier of
    /// bluetoothd's waits in the loop. Returns false to leave it to the loop.
    func applyInline(_ message: Message) -> Bool {
        guard !resyncing, let owner, message.sender == owner,
              message.interface == BlueZInterface.properties, message.member == "PropertiesChanged",
              message.body.count == 3, case .string(let interface) = message.body[0], interface != BlueZInterface.adapter
        else { return false }
        let powered = applySync(message)
        assert(powered.isEmpty, "an adapter's power change taken inline")
        return true
    }

    func applyNow(_ message: Message) async {
        for (adapter, on) in applySync(message) {
            if !on { discoverySessions.remove(adapter) }  // bluetoothd ends every discovery session
            if on { await reapply(adapter: adapter) }
            emit(.adapterPowered(adapter, on))
        }
    }

    /// Applies a signal to the mirror and emits its events; returns the
    /// adapters whose power changed, for ``applyNow(_:)`` to finish.
    private func applySync(_ message: Message) -> [(ObjectPath, Bool)] {
        guard let path = message.path, let member = message.member else { return [] }
        let now = Date()
        var events: [MirrorEvent] = []
        do {
            switch (message.interface, member) {
            case (BlueZInterface.objectManager, "InterfacesAdded"):
                guard message.body.count == 2, case .objectPath(let object) = message.body[0] else { return [] }
                events = mirror.interfacesAdded(path: object, interfaces: try message.body[1].objectInterfaces(), at: now)
            case (BlueZInterface.objectManager, "InterfacesRemoved"):
                guard message.body.count == 2, case .objectPath(let object) = message.body[0] else { return [] }
                events = mirror.interfacesRemoved(path: object, interfaces: try message.body[1].decode())
            case (BlueZInterface.properties, "PropertiesChanged"):
                guard message.body.count == 3 else { return [] }
                let interface: String = try message.body[0].decode()
                events = mirror.propertiesChanged(
                    path: path, interface: interface, changed: try message.body[1].interfaceProperties(),
                    invalidated: try message.body[2].decode(), at: now)
            case (BlueZInterface.device, "Disconnected"):
                // BlueZ 5.83 and later, just before the link's Connected=false.
                guard message.body.count >= 1 else { return [] }
                events = mirror.deviceDisconnected(path: path, reason: try message.body[0].decode())
            default:
                return []
            }
        } catch {
            logger.warning("malformed signal from bluetoothd ignored", metadata: ["member": "\(member)", JournalField.error.rawValue: "\(error)"])
            return []
        }
        return deliver(events)
    }

    /// Applies Device1 properties read from bluetoothd (not signalled) as
    /// a `PropertiesChanged` would be.
    func applyRead(_ device: ObjectPath, _ changed: InterfaceProperties) {
        _ = deliver(mirror.propertiesChanged(path: device, interface: BlueZInterface.device, changed: changed, invalidated: []))
    }

    /// What an adapter's `Powered` or `PowerState` change reports: off
    /// once, at `on-disabling` (before the links drop) or at `Powered` false,
    /// whichever comes first; on at `Powered` true, or when a power-off
    /// bluetoothd began ends with the adapter still on (`PowerState` `on`).
    func powerReports(_ adapter: ObjectPath, _ property: String, _ value: DBusValue) -> [(ObjectPath, Bool)] {
        switch (property, value) {
        case ("Powered", .boolean(true)):
            goingOff.remove(adapter)
            return [(adapter, true)]
        case ("Powered", .boolean(false)):
            return goingOff.remove(adapter) == nil ? [(adapter, false)] : []
        case ("PowerState", .string("on-disabling")):
            guard mirror.adapter(adapter)?.powered == true, goingOff.insert(adapter).inserted else { return [] }
            return [(adapter, false)]
        case ("PowerState", .string("on")):
            guard mirror.adapter(adapter)?.powered == true, goingOff.remove(adapter) != nil else { return [] }
            return [(adapter, true)]
        default:
            return []
        }
    }

    /// Emits mirror events, notes what they mean for the layer (GAP name
    /// reads, link-ups, adapter power) and resumes waiters; returns the
    /// adapters whose power changed.
    func deliver(_ events: [MirrorEvent]) -> [(ObjectPath, Bool)] {
        var powered: [(ObjectPath, Bool)] = []
        for event in events {
            emit(.mirror(event))
            if case .propertyChanged(let p, BlueZInterface.device, "ServicesResolved", _, .boolean(true)?) = event {
                gapReadRequests.yield(p)
            }
            if case .propertyChanged(let p, BlueZInterface.device, "Connected", let old, .boolean(true)?) = event, old != .boolean(true) {
                linkUps[p, default: 0] += 1
            }
            if case .propertyChanged(let p, BlueZInterface.adapter, let name, _, let new?) = event {
                powered += powerReports(p, name, new)
            }
            if case .adapterAdded(let adapter) = event, adapter.powered {
                powered.append((adapter.path, true))
            }
        }
        resumeWaiters()
        return powered
    }
}
