import DBus
import Foundation
import RelinkAPI
import Logging
import Restoration
import Synchronization
import RelinkModel

/// The client API's exported objects on relinkd's connection, and what the
/// per-caller filter needs to decide who sees which (a snapshot the
/// daemon's loop keeps current).
///
/// Every signal about an identifier or a peripheral is sent with a
/// destination (docs/api/access.md).
final class APIPublisher: Sendable {
    let connection: Connection
    let identity: CallerIdentity
    let logger: Logger
    /// Builds the interfaces (they call back into the daemon).
    let interfaces: APIInterfaces

    private struct State {
        var manager: ExportedObject?
        var centrals: [RestoreIdentifier: ExportedObject] = [:]
        var peripherals: [PeripheralID: ExportedObject] = [:]
        /// Central path → owner UID.
        var centralOwners: [ObjectPath: UInt32] = [:]
        /// Peripheral path → users that may see it (root always may).
        var peripheralViewers: [ObjectPath: Set<UInt32>] = [:]
    }
    private let state = Mutex(State())

    /// relinkd's internal objects, shown only to root and relinkd's own user.
    static let controlPath = ObjectPath(trusted: ControlObject.pathString)
    static let autoConnectPath = ObjectPath(trusted: "/org/relink/autoconnect")
    /// relinkd's own UID.
    let ownUID = getuid()

    init(connection: Connection, identity: CallerIdentity, interfaces: APIInterfaces, logger: Logger) {
        self.connection = connection
        self.identity = identity
        self.interfaces = interfaces
        self.logger = logger
    }

    /// Exports `/org/relink` with its object manager and installs the filter.
    /// - Throws: `DBusError` when the path is taken.
    func start(managerValues: [String: DBusValue]) throws {
        connection.addObjectManager(at: APIPath.manager)
        let manager = try ExportedObject(path: APIPath.manager, interfaces: [interfaces.manager], values: [RelinkNames.manager: managerValues])
        state.withLock { $0.manager = manager }
        try connection.export(manager)
        connection.setObjectFilter { [weak self] path, sender in
            guard let self else { return false }
            return await self.mayView(path, sender: sender)
        }
    }

    /// Whether the caller behind `sender` may see the object at `path`.
    func mayView(_ path: ObjectPath, sender: String) async -> Bool {
        let rule: (owner: UInt32?, viewers: Set<UInt32>?) = state.withLock { ($0.centralOwners[path], $0.peripheralViewers[path]) }
        let isInternal = path.isDescendant(of: Self.controlPath, orSelf: true) || path.isDescendant(of: Self.autoConnectPath, orSelf: true)
            || path.isDescendant(of: Daemon.agentPath, orSelf: true)
        guard rule.owner != nil || rule.viewers != nil || isInternal else { return true }
        guard let uid = try? await identity.resolve(connection, sender) else { return false }
        if uid == 0 || (isInternal && uid == ownUID) { return true }
        if isInternal { return false }
        if let owner = rule.owner { return owner == uid }
        return rule.viewers?.contains(uid) ?? false
    }

    /// Users allowed to see a peripheral (besides root).
    func viewers(of peripheral: PeripheralID) -> Set<UInt32> {
        state.withLock { $0.peripheralViewers[APIPath.peripheral(peripheral)] ?? [] }
    }

    /// Sets who may see a peripheral; returns who gained and who lost sight of it.
    @discardableResult
    func setViewers(_ uids: Set<UInt32>, of peripheral: PeripheralID) -> (gained: Set<UInt32>, lost: Set<UInt32>) {
        let old = state.withLock { s -> Set<UInt32> in
            defer { s.peripheralViewers[APIPath.peripheral(peripheral)] = uids }
            return s.peripheralViewers[APIPath.peripheral(peripheral)] ?? []
        }
        return (uids.subtracting(old), old.subtracting(uids))
    }

    /// Tells clients that a peripheral object appeared for them (`added`)
    /// or disappeared (its visibility changed), with `InterfacesAdded` or
    /// `InterfacesRemoved` unicast to each.
    func announcePeripheral(_ peripheral: PeripheralID, added: Bool, to clients: [String]) {
        guard !clients.isEmpty, let object = state.withLock({ $0.peripherals[peripheral] }) else { return }
        let interface = APIInterfaces.peripheral
        let body: DBusValue
        let member: String
        if added {
            let props = interface.properties.compactMap { p in
                object.value(of: p.name, in: interface.name).map { DBusValue.DictionaryEntry(.string(p.name), .variant($0)) }
            }
            member = "InterfacesAdded"
            body = .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), [
                .init(.string(interface.name), .dictionary(key: .string, value: .variant, props)),
            ])
        } else {
            member = "InterfacesRemoved"
            body = .array(.string, [.string(interface.name)])
        }
        for client in clients {
            do {
                try connection.emitSignal(path: APIPath.manager, interface: "org.freedesktop.DBus.ObjectManager", member: member,
                                          arguments: [.objectPath(object.path), body], destination: client)
            } catch {
                logger.warning("cannot announce a Peripheral1 object", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
            }
        }
    }

    // MARK: Write streams

    /// Exports a `WriteStream1` object that only its opener's user (and root) sees.
    func exportWriteStream(_ stream: WriteStream, owner: UInt32) throws {
        let limits = stream.limits
        let object = try ExportedObject(path: stream.path, interfaces: [interfaces.writeStream(stream)], values: [RelinkNames.writeStream: [
            WriteStream1Property.peripheral.rawValue: .string(stream.peripheral.description),
            WriteStream1Property.service.rawValue: .string(stream.key.service.string),
            WriteStream1Property.characteristic.rawValue: .string(stream.key.characteristic.string),
            WriteStream1Property.maximumLength.rawValue: .uint16(UInt16(limits?.withoutResponse ?? 0)),
            WriteStream1Property.transport.rawValue: .string(stream.transport.rawValue),
        ]])
        state.withLock { $0.centralOwners[stream.path] = owner }
        try connection.export(object)
    }

    /// Removes a `WriteStream1` object.
    func removeWriteStream(_ path: ObjectPath) {
        do { try connection.unexport(path, announceTo: []) } catch {
            logger.warning("cannot remove a WriteStream1 object", metadata: .journal([.error: "\(error)"]))
        }
        _ = state.withLock { $0.centralOwners.removeValue(forKey: path) }
    }

    /// Sends a stream's signal to its opener only.
    func signalWriteStream(_ path: ObjectPath, member: String, to owner: String) {
        do { try connection.emitSignal(path: path, interface: RelinkNames.writeStream, member: member, arguments: [], destination: owner) } catch {
            logger.debug("cannot signal a write stream", metadata: .journal([.client: "\(owner)", .error: "\(error)"]))
        }
    }

    // MARK: Centrals

    func exportCentral(_ id: RestoreIdentifier, owner: UInt32, values: [String: DBusValue], announceTo: [String]) {
        let path = APIPath.central(id)
        do {
            let object = try ExportedObject(path: path, interfaces: [interfaces.central(id), interfaces.peripheralManager(id)], values: [RelinkNames.central: values])
            state.withLock {
                $0.centrals[id] = object
                $0.centralOwners[path] = owner
            }
            try connection.export(object, announceTo: announceTo)
        } catch {
            logger.error("cannot export a Central1 object", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
        }
    }

    /// Stores a Central1 object's values without a signal (a `Get` sees
    /// them at once). Returns whether any of them changed.
    func storeCentral(_ id: RestoreIdentifier, _ values: [String: DBusValue]) -> Bool {
        guard let object = state.withLock({ $0.centrals[id] }) else { return false }
        let changed = values.contains { object.value(of: $0.key, in: RelinkNames.central) != $0.value }
        guard changed else { return false }
        do { try object.setValues(values.mapValues { Optional($0) }, in: RelinkNames.central, destinations: []) } catch {
            logger.warning("cannot update a Central1 object", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
        }
        return true
    }

    /// Sends `PropertiesChanged` with the Central1 object's current values
    /// of `properties` to each of `destinations`.
    func signalCentral(_ id: RestoreIdentifier, _ properties: [String], to destinations: [String]) {
        guard !destinations.isEmpty, let object = state.withLock({ $0.centrals[id] }) else { return }
        let changed: [DBusValue.DictionaryEntry] = properties.compactMap { name in
            object.value(of: name, in: RelinkNames.central).map { .init(.string(name), .variant($0)) }
        }
        let body: [DBusValue] = [.string(RelinkNames.central), .dictionary(key: .string, value: .variant, changed), .array(.string, [])]
        for destination in destinations {
            do {
                try connection.emitSignal(path: object.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                          arguments: body, destination: destination)
            } catch {
                logger.warning("cannot signal a Central1 change", metadata: .journal([.restoreID: "\(id)", .client: "\(destination)", .error: "\(error)"]))
            }
        }
    }

    func updateCentral(_ id: RestoreIdentifier, _ values: [String: DBusValue], to destinations: [String]) {
        guard let object = state.withLock({ $0.centrals[id] }) else { return }
        do { try object.setValues(values.mapValues { Optional($0) }, in: RelinkNames.central, destinations: destinations) } catch {
            logger.warning("cannot update a Central1 object", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
        }
    }

    func removeCentral(_ id: RestoreIdentifier, announceTo: [String]) {
        let path = APIPath.central(id)
        state.withLock {
            $0.centrals[id] = nil
            $0.centralOwners[path] = nil
        }
        do { try connection.unexport(path, announceTo: announceTo) } catch {
            logger.warning("cannot remove a Central1 object", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
        }
    }

    /// Sends one `Central1.Event` to one client.
    func sendEvent(_ id: RestoreIdentifier, sequence: Int64, kind: String, payload: String, to client: String) {
        do {
            try connection.emitSignal(
                path: APIPath.central(id), interface: RelinkNames.central, member: Central1Member.event.rawValue,
                arguments: [.uint64(UInt64(max(0, sequence))), .string(kind), .string(payload)], destination: client)
        } catch {
            logger.warning("cannot send an Event signal", metadata: .journal([.restoreID: "\(id)", .client: "\(client)", .error: "\(error)"]))
        }
    }

    // MARK: Peripherals

    func hasPeripheral(_ id: PeripheralID) -> Bool { state.withLock { $0.peripherals[id] != nil } }

    /// `Peripheral1`, checked once for the thousands of objects a large
    /// store exports at start-up.
    private static let peripheralInterfaces = Result { () throws(DBusError) in try DBusInterfaceSet([APIInterfaces.peripheral]) }

    func exportPeripheral(_ id: PeripheralID, values: [String: DBusValue], announceTo: [String]) {
        let path = APIPath.peripheral(id)
        do {
            let object = try ExportedObject(path: path, interfaces: Self.peripheralInterfaces.get(), values: [RelinkNames.peripheral: values])
            state.withLock {
                $0.peripherals[id] = object
                if $0.peripheralViewers[path] == nil { $0.peripheralViewers[path] = [] }
            }
            try connection.export(object, announceTo: announceTo)
        } catch {
            logger.error("cannot export a Peripheral1 object", metadata: .journal([.peripheral: "\(id)", .error: "\(error)"]))
        }
    }

    func updatePeripheral(_ id: PeripheralID, _ values: [String: DBusValue], to destinations: [String]) {
        guard let object = state.withLock({ $0.peripherals[id] }) else { return }
        do { try object.setValues(values.mapValues { Optional($0) }, in: RelinkNames.peripheral, destinations: destinations) } catch {
            logger.warning("cannot update a Peripheral1 object", metadata: .journal([.peripheral: "\(id)", .error: "\(error)"]))
        }
    }

    /// Sets Manager1's `AdapterState` and `AdapterRoles` (one broadcast
    /// `PropertiesChanged` for what changed: it is about no identifier).
    func setAdapterStatus(_ status: AdapterStatus) {
        guard let object = state.withLock({ $0.manager }) else { return }
        do { try object.setValues(Self.adapterValues(status).mapValues { Optional($0) }, in: RelinkNames.manager) } catch {
            logger.warning("cannot update Manager1.AdapterState", metadata: .journal([.error: "\(error)"]))
        }
    }

    /// Manager1's `AdapterState` and `AdapterRoles` for a status.
    static func adapterValues(_ status: AdapterStatus) -> [String: DBusValue] {
        [Manager1Property.adapterState.rawValue: .string(status.state.rawValue),
         Manager1Property.adapterRoles.rawValue: .array(.string, status.roles.map { .string($0.rawValue) })]
    }

    /// Sets Manager1's `Ready` (broadcast: it is about no identifier).
    func setReady(_ ready: Bool) {
        guard let object = state.withLock({ $0.manager }) else { return }
        do { try object.setValue(.boolean(ready), of: "Ready", in: RelinkNames.manager) } catch {
            logger.warning("cannot update Manager1.Ready", metadata: .journal([.error: "\(error)"]))
        }
    }
}
