public import DBus
import Restoration
import RelinkModel
import RelinkAPI

/// The internal control path (tests, bench): `/org/relink/control` with
/// `org.relink.Control1`. Clients use `org.relink.Manager1` (docs/api/).
///
/// | method | in | out |
/// |---|---|---|
/// | `Register` | `s id` | |
/// | `Connect` | `s id, s address, a{sv} options` (`pending_until_cancelled` b, `timeout_s` d, `services` as, `strategies` as, `match_name` s, `match_manufacturer_id` q, `match_services` as) | `s peripheral` |
/// | `Cancel` | `s id, s address` | |
/// | `Subscribe` | `s id, s address, s service, s characteristic` | |
/// | `Scan` | `s id, as uuids, b allow_duplicates` | |
/// | `StopScan` | `s id` | |
/// | `Events` | `s id, t after` | `a(tss)` seq, kind, JSON payload |
/// | `Ack` | `s id, t upto` | |
/// | `Status` | | `s` JSON |
///
/// Errors: `org.relink.Error.InvalidArguments`, `.UnknownIdentifier`,
/// `.UnknownPeripheral`, `.AlreadyExists`, `.Failed` (see ``RelinkError``);
/// a call whose signature differs is refused by the D-Bus binding with
/// `org.freedesktop.DBus.Error.InvalidArgs`.
/// A call is answered only after what it changed is committed to the store.
public enum ControlObject {
    /// `org.relink.Control1`.
    public static let interfaceName = RelinkNames.control
    /// Where the control object is exported.
    public static let pathString = "/org/relink/control"

    /// The exported object, forwarding validated calls to `daemon`.
    /// - Throws: `DBusError` when the interface is invalid (a programming error).
    /// Only callers whose user is root are answered; anyone else gets
    /// `NotPermitted`. relinkd exports it only when
    /// `RELINK_CONTROL_INTERFACE=1` is in its environment.
    public static func make(daemon: Daemon, identity: CallerIdentity = .bus) throws -> ExportedObject {
        @Sendable func requireRoot(_ call: MethodCall) async throws {
            guard try await identity.caller(of: call).uid == 0 else {
                throw RelinkError(.notPermitted, "org.relink.Control1 is a test interface for root only")
            }
        }
        func method(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument] = [],
                    _ parse: @escaping @Sendable (MethodCall) async throws(RelinkError) -> ControlRequest) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs, ordered: true) { call in
                try await requireRoot(call)
                let request = try await parse(call)
                switch await daemon.submit(request, queued: call.endTurn) {
                case .success(let values): return values
                case .failure(let error): throw error
                }
            }
        }
        let interface = DBusInterface(interfaceName, methods: [
            method("Register", [DBusArgument("id", .string)]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 1)
                return .register(try a.identifier(0), uid: try await identity.caller(of: call).uid)
            },
            method("Connect", [DBusArgument("id", .string), DBusArgument("address", .string), DBusArgument("options", .dictionary(key: .string, value: .variant))],
                   [DBusArgument("peripheral", .string)]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 3)
                return .connect(try a.identifier(0), try a.address(1), try a.connectOptions(2))
            },
            method("Cancel", [DBusArgument("id", .string), DBusArgument("address", .string)]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 2)
                return .cancel(try a.identifier(0), try a.address(1))
            },
            method("Subscribe", [DBusArgument("id", .string), DBusArgument("address", .string), DBusArgument("service", .string), DBusArgument("characteristic", .string)]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 4)
                return .subscribe(try a.identifier(0), try a.address(1),
                                  CharacteristicKey(service: try a.uuid(2, "service"), characteristic: try a.uuid(3, "characteristic")))
            },
            method("Scan", [DBusArgument("id", .string), DBusArgument("uuids", .array(.string)), DBusArgument("allow_duplicates", .boolean)]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 3)
                return .scan(try a.identifier(0), ScanIntent(services: try a.uuids(1, "uuids"), allowDuplicates: try a.bool(2, "allow_duplicates")))
            },
            method("StopScan", [DBusArgument("id", .string)]) { call throws(RelinkError) in
                .stopScan(try ControlArguments(call, count: 1).identifier(0))
            },
            method("Events", [DBusArgument("id", .string), DBusArgument("after", .uint64)],
                   [DBusArgument("events", .array(.structure([.uint64, .string, .string])))]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 2)
                return .events(try a.identifier(0), after: try a.uint64(1, "after"))
            },
            method("Ack", [DBusArgument("id", .string), DBusArgument("upto", .uint64)]) { call throws(RelinkError) in
                let a = try ControlArguments(call, count: 2)
                return .ack(try a.identifier(0), upto: try a.uint64(1, "upto"))
            },
            // Not a loop request: the loop hands over a snapshot, and the
            // document is made off the loop (``Daemon/statusJSON(for:)``).
            DBusMethod("Status", in: [], out: [DBusArgument("status", .string)]) { call in
                try await requireRoot(call)
                _ = try ControlArguments(call, count: 0)
                return [.string(try await daemon.statusJSON())]
            },
        ])
        return try ExportedObject(path: try ObjectPath(pathString), interfaces: [interface])
    }
}
