public import DBus

/// The `org.bluez.Agent1` a central registers for its own pairings, with
/// the `NoInputNoOutput` capability: Just Works. bluetoothd asks the agent
/// of the D-Bus client that called `Device1.Pair`, so it is registered with
/// `AgentManager1.RegisterAgent` only, never `RequestDefaultAgent`: other
/// programs' pairings keep their own agent. It answers every request
/// bluetoothd forwards (PIN, passkey, confirmation, authorization) with
/// `org.bluez.Error.Rejected`: passkey and numeric comparison are not
/// forwarded to anyone yet, so such a pairing fails.
public struct PairingAgent: Sendable, Hashable {
    /// BlueZ's agent interface.
    public static let interface = "org.bluez.Agent1"
    /// BlueZ's agent manager interface (on `/org/bluez`).
    public static let managerInterface = "org.bluez.AgentManager1"
    /// The capability registered.
    public static let capability = "NoInputNoOutput"
    /// Where the agent is exported.
    public var path: ObjectPath

    /// An agent at `path`.
    public init(path: ObjectPath) { self.path = path }

    /// Exports the agent object on a connection, unless it is there already.
    func export(on connection: Connection) throws(DBusError) {
        let rejected = DBusError.Name("org.bluez.Error.Rejected")
        func refuse(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument] = []) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs) { _ in
                throw DBusError(rejected, "relinkd's agent answers no \(name) (Just Works only)")
            }
        }
        let device = DBusArgument("device", .objectPath)
        let iface = DBusInterface(Self.interface, methods: [
            DBusMethod("Release") { _ in [] },
            DBusMethod("Cancel") { _ in [] },
            refuse("RequestPinCode", [device], [DBusArgument("pincode", .string)]),
            refuse("DisplayPinCode", [device, DBusArgument("pincode", .string)]),
            refuse("RequestPasskey", [device], [DBusArgument("passkey", .uint32)]),
            refuse("DisplayPasskey", [device, DBusArgument("passkey", .uint32), DBusArgument("entered", .uint16)]),
            refuse("RequestConfirmation", [device, DBusArgument("passkey", .uint32)]),
            refuse("RequestAuthorization", [device]),
            refuse("AuthorizeService", [device, DBusArgument("uuid", .string)]),
        ])
        // Exported once: a pairing under way keeps its agent while another starts.
        let object = try ExportedObject(path: path, interfaces: [iface])
        do { try connection.export(object) } catch where error.name == .invalidArgs {}
    }

    /// Registers the agent with bluetoothd; "already exists" is success.
    func register(on connection: Connection) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(
                    path: try ObjectPath("/org/bluez"), interface: Self.managerInterface, method: "RegisterAgent",
                    arguments: [.objectPath(path), .string(Self.capability)])
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.AlreadyExists" {}
    }
}

extension BlueZClient {
    /// Pairs with a device through the ``PairingAgent`` at `agent`,
    /// exported and registered first (both are idempotent, so a bluetoothd
    /// that restarted since gets it again). `AlreadyExists` (paired
    /// already) is success.
    /// - Throws: ``BlueZError`` (BlueZ's `AuthenticationFailed`,
    ///   `AuthenticationRejected`, `AuthenticationCanceled`,
    ///   `AuthenticationTimeout`, `ConnectionAttemptFailed`, `InProgress`,
    ///   `NotReady`, a D-Bus timeout) or ``DBusError``.
    public func pair(_ device: ObjectPath, agent: ObjectPath, timeout: Duration) async throws {
        let pairing = PairingAgent(path: agent)
        try pairing.export(on: connection)
        try await pairing.register(on: connection)
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: device, interface: BlueZInterface.device, method: "Pair", timeout: timeout)
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.AlreadyExists" {}
    }
}
