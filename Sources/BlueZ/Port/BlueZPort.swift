public import DBus
public import RelinkModel

/// What relinkd needs of BlueZ, as a port: the mirror of bluetoothd's
/// objects, its events in order, and the operations a central makes.
///
/// ``BlueZClient`` is the real adapter over D-Bus; tests put an in-memory
/// fake in its place that plays bluetoothd (the `BlueZFake` module), so the
/// daemon's decisions can be driven in-process, in milliseconds, with no bus.
/// The daemon runs on the port's executor (``Actor/unownedExecutor``), so an
/// event handed to the sink may be handled at once, on the same thread.
public protocol BlueZPort: HostingPort {
    /// The current copy of bluetoothd's object tree.
    var mirror: Mirror { get }
    /// Gives the mirror the names known of devices from before (relinkd's
    /// stored names, at start-up: ``Mirror/learnNames(_:)``).
    func learnNames(_ names: [ObjectPath: DeviceNames])
    /// Follows bluetoothd until cancelled.
    /// - Throws: when the connection to it fails.
    func run() async throws
    /// Returns once ``run()`` has built the first mirror.
    /// - Throws: ``BlueZError`` (`timeout`).
    func waitUntilReady(timeout: Duration) async throws
    /// Hands every later event to `sink`, in order, on this actor.
    func deliverEvents(to sink: @escaping @Sendable (BlueZEvent) -> Void)
    /// Whether bluetoothd is on the bus and answers relinkd.
    var bluetoothdPresence: BluetoothdPresence { get }
    /// Starts reporting the status of the adapter at `path`
    /// (``BlueZEvent/adapterStatus(_:_:)``, after each event that changes
    /// it, also while it or bluetoothd is missing); returns its status now.
    func watchAdapter(_ path: ObjectPath) -> AdapterStatus
    /// Connects a device; returns once the mirror saw the link up.
    /// - Throws: ``BlueZError``.
    func connect(_ device: ObjectPath, timeout: Duration) async throws
    /// Disconnects a device (also cancels a pending connect; "not connected" is success).
    /// - Throws: ``BlueZError``.
    func disconnect(_ device: ObjectPath) async throws
    /// Reads a characteristic.
    /// - Throws: ``BlueZError``.
    func read(_ characteristic: ObjectPath, timeout: Duration) async throws -> [UInt8]
    /// Writes a characteristic, with or without response.
    /// - Throws: ``BlueZError``.
    func write(_ characteristic: ObjectPath, _ value: [UInt8], withResponse: Bool, timeout: Duration) async throws
    /// Reads a descriptor.
    /// - Throws: ``BlueZError``.
    func readDescriptor(_ descriptor: ObjectPath, timeout: Duration) async throws -> [UInt8]
    /// Writes a descriptor.
    /// - Throws: ``BlueZError``.
    func writeDescriptor(_ descriptor: ObjectPath, _ value: [UInt8], timeout: Duration) async throws
    /// Takes a characteristic's writes without response as a socket
    /// (`AcquireWrite`): a non-blocking `SOCK_SEQPACKET` socket, one
    /// packet per ATT Write Command, and the link's ATT MTU. bluetoothd
    /// closes the socket (a hang-up) when the link drops; while it is held,
    /// its `WriteValue` answers `NotPermitted`. Close the socket to release it.
    /// - Throws: ``BlueZError`` (`notSupported` without
    ///   `write-without-response`, `notPermitted` when already acquired,
    ///   `transient` when not connected).
    func acquireWrite(_ characteristic: ObjectPath) async throws -> AcquiredWrite
    /// Starts notifications of a characteristic (kept by bluetoothd across reconnections).
    /// - Throws: ``BlueZError``.
    func startNotify(_ characteristic: ObjectPath) async throws
    /// Stops notifications of a characteristic.
    /// - Throws: ``BlueZError``.
    func stopNotify(_ characteristic: ObjectPath) async throws
    /// Sets the discovery filter and starts discovery (kept across power cycles and restarts).
    /// - Throws: ``BlueZError``.
    func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws
    /// Stops discovery.
    /// - Throws: ``BlueZError``.
    func stopDiscovery(adapter: ObjectPath) async throws
    /// Pairs with a device (`Device1.Pair`) through the caller's own
    /// agent (``PairingAgent``: its capability, its request handler),
    /// exported and registered first (never as the default agent);
    /// "already paired" is success.
    /// - Throws: ``BlueZError`` (BlueZ's `Authentication*`, `InProgress`, `NotConnected`, …).
    func pair(_ device: ObjectPath, agent: PairingAgent, timeout: Duration) async throws
    /// Sets a device's `Device1.Trusted`.
    /// - Throws: ``BlueZError``.
    func setTrusted(_ device: ObjectPath, _ trusted: Bool) async throws
    /// `Adapter1.RemoveDevice`: bluetoothd forgets the device, its bond
    /// (keys) and trust; its object goes away.
    /// - Throws: ``BlueZError``.
    func removeDevice(_ device: ObjectPath, from adapter: ObjectPath) async throws
    /// Registers (or re-registers) the background auto-connect profile for `uuids`.
    /// - Throws: ``BlueZError``.
    func setAutoConnect(uuids: [String], root: ObjectPath) async throws
}

/// A characteristic's write socket from `AcquireWrite`, and the link's ATT MTU
/// it came with.
public struct AcquiredWrite: Sendable {
    /// The socket (`SOCK_SEQPACKET`, non-blocking); closed when the last
    /// reference goes.
    public let socket: UnixFD
    /// The link's ATT MTU (a packet carries at most MTU − 3 bytes).
    public let mtu: Int

    /// A socket and its MTU.
    public init(socket: UnixFD, mtu: Int) {
        self.socket = socket
        self.mtu = mtu
    }
}

extension BlueZPort {
    /// ``readDescriptor(_:timeout:)`` with 10 s.
    public func readDescriptor(_ descriptor: ObjectPath) async throws -> [UInt8] { try await readDescriptor(descriptor, timeout: .seconds(10)) }
    /// ``writeDescriptor(_:_:timeout:)`` with 10 s.
    public func writeDescriptor(_ descriptor: ObjectPath, _ value: [UInt8]) async throws {
        try await writeDescriptor(descriptor, value, timeout: .seconds(10))
    }
    /// ``waitUntilReady(timeout:)`` with 10 s.
    public func waitUntilReady() async throws { try await waitUntilReady(timeout: .seconds(10)) }
    /// ``connect(_:timeout:)`` with 45 s.
    public func connect(_ device: ObjectPath) async throws { try await connect(device, timeout: .seconds(45)) }
    /// ``read(_:timeout:)`` with 10 s.
    public func read(_ characteristic: ObjectPath) async throws -> [UInt8] { try await read(characteristic, timeout: .seconds(10)) }
    /// ``write(_:_:withResponse:timeout:)`` with 10 s.
    public func write(_ characteristic: ObjectPath, _ value: [UInt8], withResponse: Bool) async throws {
        try await write(characteristic, value, withResponse: withResponse, timeout: .seconds(10))
    }
}

extension BlueZClient: BlueZPort {}
