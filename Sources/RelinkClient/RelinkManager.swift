import RelinkAPI
public import DBus
public import RelinkModel

/// One connection to relinkd and every call of its public API
/// (`Manager1`, and `Central1` by identifier), typed. Stateless apart
/// from the connection: ``RelinkCentral`` builds on it, and `relinkctl`
/// uses it for one-shot commands.
///
/// Every method checks its arguments first (API-SPEC limits) and throws
/// ``RelinkClientError``: `InvalidArguments` for a bad argument (caught
/// here or by relinkd), the other `org.relink.Error.*` names relinkd
/// replies, and a D-Bus name with ``RelinkClientError/isUnreachable``
/// when relinkd cannot be reached.
public final class RelinkManager: Sendable {
    /// The bus connection every call goes over; ``close()`` closes it.
    public let connection: Connection
    /// How long each call waits for relinkd's reply.
    public let timeout: Duration

    init(connection: Connection, timeout: Duration) {
        self.connection = connection
        self.timeout = timeout
    }

    /// Connects to the bus.
    /// - Throws: ``RelinkClientError`` with ``RelinkClientError/isUnreachable``
    ///   when the bus cannot be reached.
    public static func connect(to bus: RelinkBus, timeout: Duration = .seconds(25)) async throws(RelinkClientError) -> RelinkManager {
        do {
            return RelinkManager(connection: try await Connection.connect(to: bus.dbus), timeout: timeout)
        } catch {
            let e = RelinkClientError.from(error)
            throw RelinkClientError(e.isUnreachable ? e.name : .init(DBusError.Name.noServer.rawValue), "Cannot connect to the bus: \(e.message)")
        }
    }

    /// Closes the connection (attached identifiers are detached by relinkd).
    public func close() { connection.close() }

    // MARK: Calls

    func call(_ path: ObjectPath, _ interface: String, _ method: String, _ arguments: [DBusValue] = [],
              unknownObject: RelinkErrorName = .unknownIdentifier) async throws(RelinkClientError) -> Message {
        do {
            return try await connection.call(destination: RelinkNames.busName, path: path, interface: interface, method: method,
                                             arguments: arguments, timeout: timeout)
        } catch let e as DBusError where e.name == .unknownObject {
            throw RelinkClientError(unknownObject, Self.unknownMessage(path, unknownObject))
        } catch {
            throw RelinkClientError.from(error, unknownObject: unknownObject)
        }
    }

    /// The message for an object the bus says does not exist (or is not visible to the caller).
    static func unknownMessage(_ path: ObjectPath, _ name: RelinkErrorName) -> String {
        let element = path.rawValue.split(separator: "/").last.map(String.init) ?? path.rawValue
        if path.rawValue.hasPrefix(APIPath.writeStreamPrefix) {
            return "The write stream \(path.rawValue) is closed, or relinkd restarted since it was opened: open a new one."
        }
        if name == .unknownPeripheral {
            return "No peripheral \(APIPath.peripheralUUID(of: path) ?? element) is known to relinkd (or visible to you)."
        }
        return RelinkClientError.unknownIdentifier(APIPath.unescape(element) ?? element).message
    }

    func central(_ identifier: String, _ method: String, _ arguments: [DBusValue] = [],
                 unknownObject: RelinkErrorName = .unknownIdentifier) async throws(RelinkClientError) -> Message {
        try await call(try APIPath.central(for: identifier), RelinkNames.central, method, arguments, unknownObject: unknownObject)
    }

    func decode<each T: DBusDecodable>(_ reply: Message, _ what: String, _ types: repeat (each T).Type) throws(RelinkClientError) -> (repeat each T) {
        do { return try reply.decode(repeat each types) } catch { throw .badReply(what, error.message) }
    }

    // MARK: Manager1

    /// `Manager1.Register`: creates the identifier (or reopens the
    /// caller's own) and attaches this connection to it.
    /// - Returns: the identifier's object and its restored state.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `NotPermitted`
    ///   (another user's identifier), `StoreFailed`; unreachable.
    public func register(_ identifier: String, options: RelinkRegisterOptions = .init()) async throws(RelinkClientError) -> (ObjectPath, RelinkRestoredState) {
        try RelinkArguments.checkIdentifier(identifier)
        let reply = try await call(APIPath.manager, RelinkNames.manager, Manager1Member.register.rawValue,
                                   [.string(identifier), options.dictionary.variantDictionary])
        let (path, restored) = try decode(reply, "Register", ObjectPath.self, [String: DBusValue].self)
        return (path, try RelinkRestoredState(restored))
    }

    /// `Manager1.SetLaunch`: how relinkd starts the identifier's program
    /// when an event comes while no client of it is attached (nil removes
    /// it; docs/relaunch.md).
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`,
    ///   `NotActivatable` (the bus cannot start that name), `NotPermitted`
    ///   (the caller could not start it), `StoreFailed`; unreachable.
    public func setLaunch(_ identifier: String, _ spec: LaunchSpec?) async throws(RelinkClientError) {
        try RelinkArguments.checkIdentifier(identifier)
        _ = try await call(APIPath.manager, RelinkNames.manager, Manager1Member.setLaunch.rawValue,
                           [.string(identifier), LaunchOptions.value(spec)])
    }

    /// `Manager1.Unregister` ("forget"): cancels the identifier's scan,
    /// intents and subscriptions and deletes it with its outbox.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `StoreFailed`; unreachable.
    public func unregister(_ identifier: String) async throws(RelinkClientError) {
        try RelinkArguments.checkIdentifier(identifier)
        _ = try await call(APIPath.manager, RelinkNames.manager, Manager1Member.unregister.rawValue, [.string(identifier)])
    }

    /// `Manager1.ListIdentifiers`: the identifiers the caller may see.
    /// - Throws: ``RelinkClientError``: unreachable, or `Failed` for an unreadable reply.
    public func listIdentifiers() async throws(RelinkClientError) -> [(identifier: String, object: String)] {
        let reply = try await call(APIPath.manager, RelinkNames.manager, Manager1Member.listIdentifiers.rawValue)
        guard case .array(_, let items)? = reply.body.first, reply.body.count == 1 else {
            throw .badReply("ListIdentifiers", "expected 'a(so)'")
        }
        var out: [(identifier: String, object: String)] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 2, let id = f[0].stringValue, let object = f[1].stringValue else {
                throw .badReply("ListIdentifiers", "expected 'a(so)'")
            }
            out.append((id, object))
        }
        return out
    }

    /// All properties of one interface of an object (`Properties.GetAll`).
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`/`UnknownPeripheral`
    ///   (as `unknownObject`) when the object does not exist or is not
    ///   visible; unreachable.
    public func properties(of path: ObjectPath, interface: String,
                           unknownObject: RelinkErrorName = .unknownIdentifier) async throws(RelinkClientError) -> [String: DBusValue] {
        let reply = try await call(path, "org.freedesktop.DBus.Properties", "GetAll", [.string(interface)], unknownObject: unknownObject)
        return try decode(reply, "GetAll", [String: DBusValue].self)
    }

    /// `Manager1` properties: `Version`, `Adapter`, `Ready`, `Discovering`,
    /// `AdapterState`, `AdapterRoles`, `Status`.
    /// - Throws: ``RelinkClientError``: unreachable.
    public func managerProperties() async throws(RelinkClientError) -> [String: DBusValue] {
        try await properties(of: APIPath.manager, interface: RelinkNames.manager)
    }

    /// The state and roles of relinkd's adapter (`Manager1.AdapterState`,
    /// `AdapterRoles`); nil from a relinkd that does not have them, or with
    /// a state this library does not know.
    /// - Throws: ``RelinkClientError``: unreachable, or `Failed` for a property of another type.
    public func adapterStatus() async throws(RelinkClientError) -> AdapterStatus? {
        let r = PropertyReader("Manager1", try await managerProperties())
        return RelinkRestoredState.adapterStatus(state: try r.optional(Manager1Property.adapterState.rawValue),
                                                 roles: try r.value(Manager1Property.adapterRoles.rawValue, default: []))
    }

    /// The properties of an identifier's `Central1` object.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`; unreachable.
    public func centralProperties(_ identifier: String) async throws(RelinkClientError) -> RelinkCentralProperties {
        try RelinkCentralProperties(await properties(of: try APIPath.central(for: identifier), interface: RelinkNames.central))
    }

    /// The peripherals the caller may see (`GetManagedObjects`), by UUID.
    /// - Throws: ``RelinkClientError``: unreachable, or `Failed` for an unreadable reply.
    public func peripherals() async throws(RelinkClientError) -> [RelinkPeripheral] {
        let reply = try await call(APIPath.manager, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        let objects = try decode(reply, "GetManagedObjects", [ObjectPath: [String: [String: DBusValue]]].self)
        var out: [RelinkPeripheral] = []
        for (path, interfaces) in objects {
            guard let properties = interfaces[RelinkNames.peripheral] else { continue }
            out.append(try RelinkPeripheral(object: path.rawValue, properties: properties))
        }
        return out.sorted { $0.id < $1.id }
    }

    /// One peripheral's properties, by UUID.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownPeripheral`; unreachable.
    public func peripheral(_ uuid: String) async throws(RelinkClientError) -> RelinkPeripheral {
        let path = try APIPath.peripheral(for: uuid)
        return try RelinkPeripheral(object: path.rawValue,
                                    properties: await properties(of: path, interface: RelinkNames.peripheral, unknownObject: .unknownPeripheral))
    }

    // MARK: Central1

    /// `Central1.Scan`: replaces the identifier's scan.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `NotReady`, `StoreFailed`; unreachable.
    public func scan(_ identifier: String, services: [String], options: RelinkScanOptions = .init()) async throws(RelinkClientError) {
        let uuids = try RelinkArguments.bluetoothUUIDs(services)
        _ = try await central(identifier, Central1Member.scan.rawValue, [.array(.string, uuids.map(DBusValue.string)), options.dictionary.variantDictionary])
    }

    /// `Central1.StopScan`.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `StoreFailed`; unreachable.
    public func stopScan(_ identifier: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.stopScan.rawValue)
    }

    /// `Central1.Connect`: a durable connection intent.
    /// - Parameter peripheral: an address `AA:BB:CC:DD:EE:FF` or a peripheral UUID.
    /// - Returns: the peripheral's object path.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`,
    ///   `UnknownPeripheral` (a UUID relinkd does not know), `AlreadyExists`, `StoreFailed`; unreachable.
    public func connect(_ identifier: String, peripheral: String, options: RelinkConnectOptions = .init()) async throws(RelinkClientError) -> ObjectPath {
        let p = try RelinkArguments.peripheral(peripheral)
        let reply = try await central(identifier, Central1Member.connect.rawValue, [.string(p), try options.dictionary().variantDictionary])
        return try decode(reply, "Connect", ObjectPath.self)
    }

    /// `Central1.Cancel`: ends the intent and the identifier's subscriptions on the peripheral.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `StoreFailed`; unreachable.
    public func cancel(_ identifier: String, peripheral: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.cancel.rawValue, [.string(try RelinkArguments.peripheral(peripheral))])
    }

    /// `Central1.Pair`: pairs with (bonds to) a peripheral the identifier
    /// has a connection intent on and a link to (Just Works), then trusts it.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `NotConnected`,
    ///   `InProgress`, `NotReady`, `AuthenticationFailed`, `Failed`; unreachable.
    public func pair(_ identifier: String, peripheral: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.pair.rawValue, [.string(try RelinkArguments.peripheral(peripheral))])
    }

    /// `Central1.Unpair`: removes bluetoothd's bond with a peripheral no
    /// identifier uses any more (`Cancel` and `Unsubscribe` first).
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `NotPermitted`
    ///   (still used), `NotReady`, `Failed`; unreachable.
    public func unpair(_ identifier: String, peripheral: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.unpair.rawValue, [.string(try RelinkArguments.peripheral(peripheral))])
    }

    /// `Central1.Subscribe`: a durable subscription, re-armed after every reconnection.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `UnknownCharacteristic`, `AlreadyExists`, `StoreFailed`; unreachable.
    public func subscribe(_ identifier: String, peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.subscribe.rawValue, try gattArguments(peripheral, service, characteristic))
    }

    /// `Central1.Unsubscribe`.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`, `StoreFailed`; unreachable.
    public func unsubscribe(_ identifier: String, peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.unsubscribe.rawValue, try gattArguments(peripheral, service, characteristic))
    }

    /// `Central1.Read`: reads a characteristic over the live link.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `UnknownPeripheral`,
    ///   `UnknownCharacteristic`, `NotConnected`, `NotSupported`, `Failed`; unreachable.
    public func read(_ identifier: String, peripheral: String, service: String, characteristic: String) async throws(RelinkClientError) -> [UInt8] {
        let reply = try await central(identifier, Central1Member.read.rawValue, try gattArguments(peripheral, service, characteristic))
        return try decode(reply, "Read", [UInt8].self)
    }

    /// `Central1.Write`.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (also for a value over 512 bytes),
    ///   `UnknownIdentifier`, `UnknownPeripheral`, `UnknownCharacteristic`, `NotConnected`, `NotSupported`, `Failed`; unreachable.
    public func write(_ identifier: String, peripheral: String, service: String, characteristic: String, value: [UInt8],
                      withResponse: Bool = true) async throws(RelinkClientError) {
        try RelinkArguments.checkValue(value)
        let options: [String: DBusValue] = ["with_response": .boolean(withResponse)]
        _ = try await central(identifier, Central1Member.write.rawValue, try gattArguments(peripheral, service, characteristic)
            + [.array(.byte, value.map(DBusValue.byte)), options.variantDictionary])
    }

    /// `Central1.Events`: stored events with sequence > `after`, at most `max` (≤ 10,000).
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`; unreachable.
    public func events(_ identifier: String, after: UInt64, max: UInt32 = RelinkArguments.maximumEvents) async throws(RelinkClientError) -> [RelinkClientEvent] {
        guard max >= 1, max <= RelinkArguments.maximumEvents else {
            throw .invalid("At most \(RelinkArguments.maximumEvents) events can be asked for at once, and at least 1.")
        }
        let reply = try await central(identifier, Central1Member.events.rawValue, [.uint64(after), .uint32(max)])
        guard case .array(_, let items)? = reply.body.first, reply.body.count == 1 else { throw .badReply("Events", "expected 'a(tss)'") }
        var out: [RelinkClientEvent] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard case .structure(let f) = item, f.count == 3, case .uint64(let seq) = f[0],
                  case .string(let kind) = f[1], case .string(let payload) = f[2] else { throw .badReply("Events", "expected 'a(tss)'") }
            out.append(RelinkClientEvent(sequence: seq, kind: kind, payloadJSON: payload))
        }
        return out
    }

    /// `Central1.Ack`: everything up to `sequence` is processed and deleted.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (beyond `LastSequence`),
    ///   `UnknownIdentifier`, `StoreFailed`; unreachable.
    public func acknowledge(_ identifier: String, through sequence: UInt64) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.ack.rawValue, [.uint64(sequence)])
    }

    /// `Central1.Watch`: attaches this connection without registering:
    /// Event signals for sequence > `after`, then live.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`; unreachable.
    public func watch(_ identifier: String, after: UInt64) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.watch.rawValue, [.uint64(after)])
    }

    /// `Central1.Unwatch`.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`; unreachable.
    public func unwatch(_ identifier: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.unwatch.rawValue)
    }

    /// Subscribes (with the bus) to `Central1.Event` signals from relinkd.
    /// Call it before `Register`/`Watch` so that no signal is missed.
    /// - Throws: ``RelinkClientError``: unreachable.
    public func eventSignals() async throws(RelinkClientError) -> RelinkEventSignals {
        do {
            let rule = SignalMatch(sender: RelinkNames.busName, interface: RelinkNames.central, member: Central1Member.event.rawValue,
                                 pathNamespace: try ObjectPath("/org/relink/central"))
            return RelinkEventSignals(events: try await connection.signals(matching: rule))
        } catch {
            throw RelinkClientError.from(error)
        }
    }

    /// Subscribes (with the bus) to the removal of `Central1` objects this
    /// connection may see: an identifier unregistered, by its program or
    /// another. Call it before `Watch` so that no removal is missed.
    /// - Throws: ``RelinkClientError``: unreachable.
    public func removedCentrals() async throws(RelinkClientError) -> RelinkRemovedCentrals {
        do {
            let rule = SignalMatch(sender: RelinkNames.busName, interface: "org.freedesktop.DBus.ObjectManager",
                                   member: "InterfacesRemoved", path: APIPath.manager)
            return RelinkRemovedCentrals(removedCentrals: try await connection.signals(matching: rule))
        } catch {
            throw RelinkClientError.from(error)
        }
    }

    /// Owner changes of `org.relink` (`newOwner == nil`: relinkd left the
    /// bus, and every attachment of this connection with it).
    /// - Throws: ``RelinkClientError``: unreachable.
    public func relinkdOwnerChanges() async throws(RelinkClientError) -> NameOwnerChanges {
        do { return try await connection.nameOwnerChanges(for: RelinkNames.busName) } catch { throw RelinkClientError.from(error) }
    }

    func gattArguments(_ peripheral: String, _ service: String, _ characteristic: String) throws(RelinkClientError) -> [DBusValue] {
        [.string(try RelinkArguments.peripheral(peripheral)), .string(try RelinkArguments.bluetoothUUID(service)),
         .string(try RelinkArguments.bluetoothUUID(characteristic))]
    }
}
