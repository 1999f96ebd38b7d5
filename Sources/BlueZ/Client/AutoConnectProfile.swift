public import DBus
import RelinkModel

/// A GATT application holding one `org.bluez.GattProfile1` object whose
/// `UUIDs` are the services relink wants links to. Registered through
/// `GattManager1.RegisterApplication`, it makes bluetoothd ask the kernel
/// to reconnect known (non-temporary) devices offering those services
/// whenever they advertise: background auto-connect, the cheapest way to
/// hold a "pending until cancelled" connection (bluez-facts.md).
public struct AutoConnectProfile: Sendable, Hashable {
    /// Where the application's object manager is exported.
    public var root: ObjectPath
    /// Service UUIDs (128-bit, lower case).
    public var uuids: [String]

    public init(root: ObjectPath, uuids: [String]) {
        self.root = root
        self.uuids = uuids.map { $0.lowercased() }.sorted()
    }

    var profilePath: ObjectPath { (try? root.appending("profile0")) ?? root }

    /// Exports the application objects on a connection.
    func export(on connection: Connection) throws(DBusError) {
        connection.addObjectManager(at: root)
        let iface = DBusInterface(
            BlueZInterface.gattProfile,
            methods: [DBusMethod("Release") { _ in [] }],
            properties: [DBusProperty("UUIDs", .array(.string))])
        let object = try ExportedObject(
            path: profilePath, interfaces: [iface],
            values: [BlueZInterface.gattProfile: ["UUIDs": .array(.string, uuids.map { .string($0) })]])
        try connection.unexport(profilePath)
        try connection.export(object)
    }

    /// Removes the exported objects (after unregistering everywhere).
    func unexport(on connection: Connection) throws(DBusError) {
        try connection.unexport(profilePath)
    }

    /// Unregisters the application from an adapter's GattManager1.
    /// "Does not exist" (never registered there, or a bluetoothd that has
    /// restarted since) is success.
    func unregister(on adapter: ObjectPath, connection: Connection) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(
                    path: adapter, interface: BlueZInterface.gattManager,
                    method: "UnregisterApplication", arguments: [.objectPath(root)])
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.DoesNotExist" {}
    }

    /// Registers the application with an adapter's GattManager1.
    /// "Already exists" is success.
    func register(on adapter: ObjectPath, connection: Connection) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(
                    path: adapter, interface: BlueZInterface.gattManager,
                    method: "RegisterApplication", arguments: [.objectPath(root), .dictionary(key: .string, value: .variant, [])])
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.AlreadyExists" {}
    }
}

extension BlueZClient {
    /// Registers (or changes) the auto-connect profile with every powered
    /// adapter, and keeps it registered across bluetoothd restarts and
    /// adapter power cycles. The connection must be serving
    /// (``Connection/serve()``) for bluetoothd to read the application.
    ///
    /// bluetoothd reads a profile's `UUIDs` once, at `RegisterApplication`,
    /// and answers a second registration of the same application with
    /// `AlreadyExists` (`src/gatt-database.c`); registering also probes the
    /// known devices again, which turns auto-connect back on for a device a
    /// `Disconnect()` turned it off for. So every call unregisters the
    /// application first and registers it anew: the new UUIDs take effect,
    /// and a call with the same UUIDs renews the auto-connect of every known
    /// device offering them. With no UUIDs the application is only
    /// unregistered (bluetoothd refuses a profile without UUIDs).
    /// - Throws: ``BlueZError`` or ``DBusError``.
    public func setAutoConnect(uuids: [String], root: ObjectPath) async throws {
        let profile = AutoConnectProfile(root: root, uuids: uuids)
        if let current = autoConnect {
            autoConnect = nil
            for adapter in mirror.adapters where adapter.powered {
                do {
                    try await current.unregister(on: adapter.path, connection: connection)
                } catch {
                    logger.warning("cannot unregister the auto-connect profile", metadata: ["adapter": "\(adapter.path)", JournalField.error.rawValue: "\(error)"])
                }
            }
            try current.unexport(on: connection)
        }
        guard !profile.uuids.isEmpty else { return }
        try profile.export(on: connection)
        autoConnect = profile
        for adapter in mirror.adapters where adapter.isOn {  // at power-on otherwise (reapply)
            try await profile.register(on: adapter.path, connection: connection)
            autoConnectRegistrations.append((owner, adapter.path))
        }
    }
}
