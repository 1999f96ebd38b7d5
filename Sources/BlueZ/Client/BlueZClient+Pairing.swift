public import DBus
public import RelinkModel

/// The `org.bluez.Agent1` a central registers for its own pairings.
/// bluetoothd asks the agent of the D-Bus client that called `Device1.Pair`,
/// so it is registered with `AgentManager1.RegisterAgent` only, never
/// `RequestDefaultAgent`: other programs' pairings keep their own agent.
/// Its requests (PIN, passkey, confirmation, authorization) go to
/// ``handler``; `AuthorizeService` is always refused.
public struct PairingAgent: Sendable {
    /// BlueZ's agent interface.
    public static let interface = "org.bluez.Agent1"
    /// BlueZ's agent manager interface (on `/org/bluez`).
    public static let managerInterface = "org.bluez.AgentManager1"
    /// Where the agent is exported.
    public var path: ObjectPath
    /// The capability registered for this pairing.
    public var capability: AgentCapability
    /// Whether an agent of this connection may be registered already with
    /// another capability: it is unregistered and registered again.
    public var replacing: Bool
    /// Who answers the requests (the first export's handler stays).
    public var handler: AgentRequestHandler

    /// An agent at `path`; by default Just Works, every request refused.
    public init(path: ObjectPath, capability: AgentCapability = .noInputNoOutput, replacing: Bool = false,
                handler: @escaping AgentRequestHandler = { _, _ in .reject }) {
        self.path = path
        self.capability = capability
        self.replacing = replacing
        self.handler = handler
    }

    /// Exports the agent object on a connection, unless it is there already.
    func export(on connection: Connection) throws(DBusError) {
        let handler = self.handler
        @Sendable func answered(_ answer: AgentAnswer) throws(DBusError) -> [DBusValue] {
            switch answer {
            case .accept: return []
            case .passkey(let p): return [.uint32(p)]
            case .pinCode(let pin): return [.string(pin)]
            case .reject: throw DBusError(DBusError.Name("org.bluez.Error.Rejected"), "the pairing request was refused")
            case .cancel: throw DBusError(DBusError.Name("org.bluez.Error.Canceled"), "the pairing request was not answered")
            }
        }
        func forward(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument] = [],
                     _ request: @escaping @Sendable ([DBusValue]) -> AgentRequest?) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs) { call in
                guard case .objectPath(let device)? = call.arguments.first, let asked = request(call.arguments) else {
                    throw DBusError(DBusError.Name("org.bluez.Error.Rejected"), "malformed \(name)")
                }
                let answer = await handler(device, asked)
                switch (asked, answer) {
                case (.passkey, .passkey), (.pinCode, .pinCode), (.displayPasskey, .accept), (.confirmation, .accept),
                     (.authorization, .accept), (_, .reject), (_, .cancel):
                    return try answered(answer)
                default:
                    return try answered(.reject)
                }
            }
        }
        @Sendable func passkey(_ args: [DBusValue]) -> UInt32? {
            if args.count > 1, case .uint32(let p) = args[1] { p } else { nil }
        }
        let device = DBusArgument("device", .objectPath)
        let iface = DBusInterface(Self.interface, methods: [
            DBusMethod("Release") { _ in [] },
            DBusMethod("Cancel") { _ in [] },
            forward("RequestPinCode", [device], [DBusArgument("pincode", .string)]) { _ in .pinCode },
            DBusMethod("DisplayPinCode", in: [device, DBusArgument("pincode", .string)], out: []) { _ in
                throw DBusError(DBusError.Name("org.bluez.Error.Rejected"), "relinkd's agent shows no PIN")
            },
            forward("RequestPasskey", [device], [DBusArgument("passkey", .uint32)]) { _ in .passkey },
            forward("DisplayPasskey", [device, DBusArgument("passkey", .uint32), DBusArgument("entered", .uint16)]) { args in
                passkey(args).map { .displayPasskey($0) }
            },
            forward("RequestConfirmation", [device, DBusArgument("passkey", .uint32)]) { args in passkey(args).map { .confirmation($0) } },
            forward("RequestAuthorization", [device]) { _ in .authorization },
            DBusMethod("AuthorizeService", in: [device, DBusArgument("uuid", .string)], out: []) { _ in
                throw DBusError(DBusError.Name("org.bluez.Error.Rejected"), "relinkd's agent authorizes no service")
            },
        ])
        // Exported once: a pairing under way keeps its agent while another starts.
        let object = try ExportedObject(path: path, interfaces: [iface])
        do { try connection.export(object) } catch where error.name == .invalidArgs {}
    }

    /// Registers the agent with bluetoothd with its capability; "already
    /// exists" is success, unless ``replacing``: then it is unregistered and
    /// registered again with this capability.
    func register(on connection: Connection) async throws {
        let manager = try ObjectPath("/org/bluez")
        func call(_ method: String, _ arguments: [DBusValue]) async throws {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: manager, interface: Self.managerInterface, method: method, arguments: arguments)
            }
        }
        do {
            try await call("RegisterAgent", [.objectPath(path), .string(capability.rawValue)])
        } catch let e as BlueZError where e.name == "org.bluez.Error.AlreadyExists" {
            guard replacing else { return }
            try? await call("UnregisterAgent", [.objectPath(path)])
            try await call("RegisterAgent", [.objectPath(path), .string(capability.rawValue)])
        }
    }
}

extension BlueZClient {
    /// Pairs with a device through `agent`, exported and registered first (both are idempotent, so a bluetoothd
    /// that restarted since gets it again). `AlreadyExists` (paired
    /// already) is success.
    /// - Throws: ``BlueZError`` (BlueZ's `AuthenticationFailed`,
    ///   `AuthenticationRejected`, `AuthenticationCanceled`,
    ///   `AuthenticationTimeout`, `ConnectionAttemptFailed`, `InProgress`,
    ///   `NotReady`, a D-Bus timeout) or ``DBusError``.
    public func pair(_ device: ObjectPath, agent: PairingAgent, timeout: Duration) async throws {
        try agent.export(on: connection)
        try await agent.register(on: connection)
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: device, interface: BlueZInterface.device, method: "Pair", timeout: timeout)
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.AlreadyExists" {}
    }
}
