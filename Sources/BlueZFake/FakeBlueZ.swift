public import BlueZ
public import DBus
import struct Foundation.Date
public import RelinkModel

/// An in-memory bluetoothd for in-process tests, in the place of
/// ``BlueZ/BlueZClient`` behind the ``BlueZ/BlueZPort``: it keeps a world
/// of peripherals, turns what a central asks for (discovery, connect,
/// notify) and what the test does to the world (out of range, a value
/// pushed, bluetoothd restarted) into the D-Bus signals bluetoothd would
/// send, and applies them to a real ``BlueZ/Mirror``, so that the daemon
/// sees exactly the events it would see from the BlueZ layer.
///
/// It plays bluetoothd as measured (`docs/real-bluez.md`), including what
/// the Python mock does not: a drop and a reconnect merged into one
/// `PropertiesChanged` (``mergedDropAndReconnect(_:)``), `ServicesResolved`
/// before the characteristics (``Quirks/servicesResolvedBeforeCharacteristics``),
/// a Device1 removed while connected (``removeDeviceObject(_:)``), GATT
/// objects removed and re-added under new paths on a live link
/// (``restartGattApplication(_:)``), the GAP name arriving in `Device1.Name`.
/// Nothing in it sleeps: every effect happens when it is asked for.
public actor FakeBlueZ: BlueZPort {
    /// Switches for bluetoothd behaviours a test wants played.
    public struct Quirks: Sendable {
        /// Signal `ServicesResolved=true` before the characteristic objects
        /// are added (seen on 5.66); they come with ``addPendingCharacteristics(_:)``.
        public var servicesResolvedBeforeCharacteristics = false
        /// Put the GAP name into `Device1.Name` after a connection (5.66 hides 0x1800).
        public var gapNameInDeviceName = true
        /// Send `Device1.Disconnected(reason, message)` before each link's
        /// `Connected=false`, as BlueZ 5.83 and later do (out of range:
        /// `Timeout`; ``FakeBlueZ/dropLink(_:cause:)`` names another).
        public var disconnectedSignal = false
        /// A quirk set.
        public init() {}
    }

    /// One operation a central asked of the fake, for assertions.
    public enum Call: Sendable, Hashable {
        /// `Device1.Connect`.
        case connect(String)
        /// `Device1.Disconnect`.
        case disconnect(String)
        /// `StartNotify` on a characteristic path.
        case startNotify(ObjectPath)
        /// `StopNotify`.
        case stopNotify(ObjectPath)
        /// `StartDiscovery` with the filter's services.
        case startDiscovery([BluetoothUUID])
        /// `StopDiscovery`.
        case stopDiscovery
        /// A registration of the auto-connect profile.
        case setAutoConnect([String])
        /// `Device1.Pair`, with the agent registered for it.
        case pair(String, agent: ObjectPath)
        /// `Device1.Trusted` set.
        case setTrusted(String, Bool)
        /// `Adapter1.RemoveDevice`.
        case removeDevice(String)
    }

    /// The current copy of the fake bluetoothd's objects.
    public internal(set) var mirror = Mirror()
    /// The operations asked for, in order.
    public internal(set) var calls: [Call] = []
    /// Behaviours to play.
    public var quirks = Quirks()
    /// The adapter's object path.
    public nonisolated let adapterPath: ObjectPath

    let adapterAddress: String
    var sink: (@Sendable (BlueZEvent) -> Void)?
    var ready = false
    /// True while a ``run()`` (one client of bluetoothd) has set up its
    /// world: a restarted daemon waits for its own run, not the last one's.
    var clientReady = false
    var readyWaiters: [CheckedContinuation<Void, Never>] = []
    var world: [BluetoothAddress: FakePeripheral] = [:]
    var connected: Set<BluetoothAddress> = []
    /// The cause the next ``linkDown(_:)`` of a device reports (with
    /// ``Quirks/disconnectedSignal``); `Timeout` when none is set.
    var nextLinkEndCause: [BluetoothAddress: LinkEndCause] = [:]
    /// Notify sessions by (address, service, characteristic): kept across
    /// reconnections, as bluetoothd keeps a client's sessions.
    var sessions: Set<Key> = []
    var discovery: DiscoveryFilter?
    var autoConnectUUIDs: Set<BluetoothUUID> = []
    /// The peripheral role: applications and advertisements hosted (``FakeHosting``).
    var hosting = FakeHosting()
    /// Devices whose auto-connect a `Disconnect()` turned off.
    var autoConnectOff: Set<BluetoothAddress> = []
    /// Bumped when a peripheral's GATT application restarts: new object paths.
    var gattGeneration: [BluetoothAddress: Int] = [:]
    var bluetoothdUp = true
    /// The bus refuses the central's calls to bluetoothd (``setAccessRefused(_:)``).
    var accessRefused = false
    /// Whether bluetoothd has the adapter (``removeAdapter()``).
    var adapterPresent = true
    /// Whether rfkill blocks the adapter (``setAdapterBlocked(_:)``).
    var adapterBlocked = false
    /// The adapter's `Roles`.
    let adapterRoles: [String]
    /// The adapters the central watches.
    var adapterStatus = AdapterStatusReporter()
    /// True while the adapter powers off: links drop, nothing reconnects.
    var adapterGoingDown = false

    /// Whether the adapter can scan and connect now: bluetoothd there and
    /// reachable, the adapter present and powered.
    var adapterUsable: Bool {
        bluetoothdUp && !accessRefused && !adapterGoingDown && mirror.adapter(adapterPath)?.powered == true
    }
    /// Links the kernel kept across a bluetoothd SIGKILL, which the new
    /// bluetoothd shows connected and drops (``dropKeptLinks()``).
    var keptLinks: Set<BluetoothAddress> = []
    /// The peripheral's end of each acquired write socket (`AcquireWrite`).
    var acquiredWrites: [Key: UnixFD] = [:]
    /// Values received without response, per characteristic, in order.
    var receivedWrites: [Key: [[UInt8]]] = [:]
    /// Write requests received and writes held (``holdWrites(after:)``).
    var writeLog = FakeWriteLog()
    /// Bonds and trust bluetoothd stores (``FakePairing``).
    var pairing = FakePairing()
    /// The error the peripheral answers each characteristic's CCC write with (``refuseNotifications(_:service:characteristic:with:)``).
    var notifyRefusals: [Key: BlueZError] = [:]
    /// `Device1.Connect` calls waiting for a kept link to be dropped.
    var heldConnects: [BluetoothAddress: [CheckedContinuation<Void, Never>]] = [:]

    struct Key: Hashable { var address: BluetoothAddress; var service: BluetoothUUID; var characteristic: BluetoothUUID }

    /// A fake bluetoothd with one powered adapter that supports `roles`
    /// (BlueZ's `Adapter1.Roles` names).
    public init(adapter: String = "hci0", address: String = "00:00:00:00:00:01",
                roles: [String] = ["central", "peripheral", "central-peripheral"]) {
        adapterPath = ObjectPath(fakeTrusted: "/org/bluez/\(adapter)")
        adapterAddress = address
        adapterRoles = roles
    }

    // MARK: BlueZPort

    /// Builds the first mirror, then waits until cancelled. A second run
    /// is a new client of the same bluetoothd (relinkd restarted): the
    /// links stay, the previous client's notify sessions and auto-connect
    /// profile ended when it left the bus.
    public func run() async throws {
        defer { clientReady = false }
        if ready {
            for key in sessions where connected.contains(key.address) {
                if let path = path(of: key) { change(path, BlueZInterface.gattCharacteristic, ["Notifying": .boolean(false)]) }
            }
            sessions = []
            autoConnectUUIDs = []
            discovery = nil
            emit(.reset(.initial))
        } else {
            rebuild(reason: .initial)
        }
        ready = true
        clientReady = true
        for waiter in readyWaiters { waiter.resume() }
        readyWaiters = []
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))  // waits for cancellation; nothing is timed here
        }
    }

    /// Returns once ``run()`` built the first mirror.
    public func waitUntilReady(timeout: Duration) async throws {
        if clientReady { return }
        await withCheckedContinuation { readyWaiters.append($0) }
    }

    /// Hands every later event to `sink`.
    public func deliverEvents(to sink: @escaping @Sendable (BlueZEvent) -> Void) { self.sink = sink }

    /// Whether bluetoothd is there and lets the central in.
    public var bluetoothdPresence: BluetoothdPresence {
        !bluetoothdUp ? .absent : accessRefused ? .refused : .present
    }

    /// Gives the mirror the names known of devices from before (``Mirror/learnNames(_:)``).
    public func learnNames(_ names: [ObjectPath: DeviceNames]) {
        mirror.learnNames(names)
    }

    /// Starts reporting the adapter's status changes; its status now.
    public func watchAdapter(_ path: ObjectPath) -> AdapterStatus {
        adapterStatus.watch(path, mirror: mirror, bluetoothd: bluetoothdPresence)
    }

    /// Connects a device in range; fails as BlueZ does when it is not.
    public func connect(_ device: ObjectPath, timeout: Duration) async throws {
        let address = try address(of: device)
        calls.append(.connect(address.string))
        try requireBluetoothd()
        guard adapterUsable else { throw BlueZError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready") }
        guard let peripheral = world[address], peripheral.inRange else {
            throw BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        }
        autoConnectOff.remove(address)
        if keptLinks.contains(address) {
            // bluetoothd answers once the kept link is gone and a new one is up.
            await withCheckedContinuation { heldConnects[address, default: []].append($0) }
            return
        }
        if connected.contains(address) { return }
        linkUp(address)
    }

    /// Disconnects a device; for one not connected, turns its auto-connect off.
    public func disconnect(_ device: ObjectPath) async throws {
        let address = try address(of: device)
        calls.append(.disconnect(address.string))
        try requireBluetoothd()
        autoConnectOff.insert(address)
        if connected.contains(address) { linkDown(address) }
    }

    /// The characteristic's value.
    public func read(_ characteristic: ObjectPath, timeout: Duration) async throws -> [UInt8] {
        let (key, _) = try characteristicKey(characteristic)
        guard connected.contains(key.address) else { throw BlueZError(name: "org.bluez.Error.Failed", message: "Not connected") }
        try requireBondIfEncrypted(key)
        return value(key) ?? []
    }

    /// Stores the value (the peripheral "receives" it).
    public func write(_ characteristic: ObjectPath, _ value: [UInt8], withResponse: Bool, timeout: Duration) async throws {
        let (key, _) = try characteristicKey(characteristic)
        let answered = await passWriteGate()
        guard connected.contains(key.address) else { throw BlueZError(name: "org.bluez.Error.Failed", message: "Not connected") }
        try requireBondIfEncrypted(key)
        guard acquiredWrites[key] == nil else { throw BlueZError(name: "org.bluez.Error.NotPermitted", message: "Write acquired") }
        if let longest = writeLog.longest, value.count > longest {
            throw BlueZError(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length")
        }
        if withResponse { writeLog.requests[key, default: []].append(value) } else { receivedWrites[key, default: []].append(value) }
        guard answered else { throw BlueZError(name: "org.freedesktop.DBus.Error.NoReply", message: "the caller stopped waiting") }
        setValue(key, value)
    }

    /// Opens a notify session (armed now if linked, else at the next connection).
    public func startNotify(_ characteristic: ObjectPath) async throws {
        calls.append(.startNotify(characteristic))
        try requireBluetoothd()
        let (key, path) = try characteristicKey(characteristic)
        if connected.contains(key.address) { try requireBondIfEncrypted(key) }  // the CCCD write is refused
        if connected.contains(key.address), let refusal = notifyRefusals[key] { throw refusal }
        sessions.insert(key)
        if connected.contains(key.address) { change(path, BlueZInterface.gattCharacteristic, ["Notifying": .boolean(true)]) }
    }

    /// Closes a notify session.
    public func stopNotify(_ characteristic: ObjectPath) async throws {
        calls.append(.stopNotify(characteristic))
        let (key, path) = try characteristicKey(characteristic)
        guard sessions.remove(key) != nil else { throw BlueZError(name: "org.bluez.Error.Failed", message: "No notify session started") }
        change(path, BlueZInterface.gattCharacteristic, ["Notifying": .boolean(false)])
    }

    /// Starts discovery: peripherals in range that match are reported.
    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws {
        calls.append(.startDiscovery(filter.services.sorted()))
        try requireBluetoothd()
        discovery = filter  // kept while the adapter is off, as the BlueZ layer keeps it
        guard adapterUsable else { throw BlueZError(name: "org.bluez.Error.NotReady", message: "adapter powered off") }
        change(adapterPath, BlueZInterface.adapter, ["Discovering": .boolean(true)])
        for address in world.keys.sorted() { advertise(address) }
    }

    /// Stops discovery.
    public func stopDiscovery(adapter: ObjectPath) async throws {
        calls.append(.stopDiscovery)
        discovery = nil
        change(adapterPath, BlueZInterface.adapter, ["Discovering": .boolean(false)])
    }

    /// Registers the auto-connect profile: known devices offering one of
    /// `uuids` are connected whenever they are in range.
    public func setAutoConnect(uuids: [String], root: ObjectPath) async throws {
        calls.append(.setAutoConnect(uuids))
        try requireBluetoothd()
        autoConnectUUIDs = Set(uuids.compactMap { try? BluetoothUUID(parsing: $0) })
        autoConnectOff = []
        for address in world.keys.sorted() { autoConnectIfWanted(address) }
    }

    // MARK: The world, as a test changes it

    /// Adds a peripheral to the world; `known` makes bluetoothd already
    /// hold a Device1 for it (as after an earlier connection).
    public func add(_ peripheral: FakePeripheral, known: Bool = false) {
        world[peripheral.address] = peripheral
        if known, ready { addDevice(peripheral.address) }
        if known { preKnown.insert(peripheral.address) }
        if ready { advertise(peripheral.address) }
    }
    var preKnown: Set<BluetoothAddress> = []

    /// Moves a peripheral out of range (its link drops) or back (it
    /// advertises again: discovery and background auto-connect see it).
    public func setInRange(_ address: BluetoothAddress, _ inRange: Bool) {
        world[address]?.inRange = inRange
        if !inRange, connected.contains(address) { linkDown(address) }
        if inRange { advertise(address) }
    }

    /// The peripheral ends its link (it stays in range), with the cause a
    /// BlueZ 5.83 bluetoothd reports (``Quirks/disconnectedSignal``).
    public func dropLink(_ address: BluetoothAddress, cause: LinkEndCause) {
        guard connected.contains(address) else { return }
        nextLinkEndCause[address] = cause
        linkDown(address)
    }

    /// The peripheral notifies a value: sent to the central when the link
    /// is up and a session is open.
    public func push(_ address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID, _ value: [UInt8]) {
        let key = Key(address: address, service: service, characteristic: characteristic)
        setValue(key, value)
        guard sessionArmed(key), let path = path(of: key) else { return }
        change(path, BlueZInterface.gattCharacteristic, ["Value": .array(.byte, value.map { .byte($0) })])
    }

    /// The link drops (supervision timeout): `ServicesResolved`, then `Connected` false.
    public func dropLink(_ address: BluetoothAddress) {
        if connected.contains(address) { linkDown(address) }
    }

    /// Real bluetoothd: a drop followed at once by a reconnect arrives as one
    /// `PropertiesChanged` with `ServicesResolved=false, Connected=true`; the
    /// new link is half-open (nothing flows) until it drops for good.
    public func mergedDropAndReconnect(_ address: BluetoothAddress) {
        guard connected.contains(address) else { return }
        change(devicePath(address), BlueZInterface.device, ["ServicesResolved": .boolean(false), "Connected": .boolean(true)])
    }

    /// bluetoothd removes the Device1 (and its GATT objects) although the
    /// central held it as connected.
    public func removeDeviceObject(_ address: BluetoothAddress) {
        connected.remove(address)
        removeGatt(address)
        apply(InterfacesRemoved: devicePath(address), [BlueZInterface.device])
    }

    /// The peripheral's GATT application restarts on a live link: its
    /// services are removed and added again under new object paths.
    public func restartGattApplication(_ address: BluetoothAddress) {
        guard connected.contains(address) else { return }
        removeGatt(address)
        gattGeneration[address, default: 0] += 1
        addGatt(address)
        for key in sessions where sessionArmed(key) {
            if let path = path(of: key) { change(path, BlueZInterface.gattCharacteristic, ["Notifying": .boolean(true)]) }
        }
    }

    /// Adds the characteristics held back by
    /// ``Quirks/servicesResolvedBeforeCharacteristics``.
    public func addPendingCharacteristics(_ address: BluetoothAddress) {
        addGatt(address, characteristicsOnly: true)
    }

    /// Another program on the machine connects the peripheral (the
    /// already-connected strategy's case).
    public func connectByAnotherProgram(_ address: BluetoothAddress) {
        guard let peripheral = world[address], peripheral.inRange, !connected.contains(address) else { return }
        linkUp(address)
    }

    /// Sets ``Quirks/servicesResolvedBeforeCharacteristics``.
    public func setQuirk(servicesResolvedBeforeCharacteristics: Bool) {
        quirks.servicesResolvedBeforeCharacteristics = servicesResolvedBeforeCharacteristics
    }

    /// Sets ``Quirks/disconnectedSignal`` (play BlueZ 5.83's `Device1.Disconnected`).
    public func setQuirk(disconnectedSignal: Bool) {
        quirks.disconnectedSignal = disconnectedSignal
    }

    /// Whether the link to `address` is up.
    public func isConnected(_ address: BluetoothAddress) -> Bool { connected.contains(address) }

    /// The filter of the discovery running, as the central set it; nil when
    /// not discovering.
    public var discoveryFilter: DiscoveryFilter? { discovery }

    /// The object path of a device.
    public nonisolated func devicePath(_ address: BluetoothAddress) -> ObjectPath {
        Device.path(of: address, on: adapterPath) ?? { preconditionFailure("invalid fake adapter path \(adapterPath)") }()
    }
}

extension ObjectPath {
    /// A path the fake builds from constants and addresses, valid by construction.
    init(fakeTrusted raw: String) {
        do { self = try ObjectPath(raw) } catch { preconditionFailure("invalid fake object path \(raw)") }
    }
}
