import DBus
import RelinkAPI
import Restoration

/// Starts a launch spec's systemd unit (docs/relaunch.md#systemd):
/// `org.freedesktop.systemd1.Manager.StartUnit(unit, "replace")` on the
/// system manager, for root's specs only (``LaunchPermission/decide(unit:uid:)``).
/// The program owns the spec's bus name when it runs (a `Type=dbus` unit's
/// `BusName=`): a name with an owner means it already runs, and nothing is
/// started.
struct SystemdUnitStarter: Sendable {
    /// relinkd's bus, where the spec's bus name is owned.
    let relinkdBus: Connection
    /// The manager's bus; nil: relinkd's own (the system bus).
    let managerAddress: String?

    static let manager = "org.freedesktop.systemd1"
    static let managerPath = ObjectPath(trusted: "/org/freedesktop/systemd1")
    static let managerInterface = "org.freedesktop.systemd1.Manager"

    /// Starts `unit` unless `busName` already has an owner.
    func start(_ unit: String, busName: String) async -> LaunchStartOutcome {
        do {
            if try await relinkdBus.nameOwner(of: busName) != nil { return .alreadyRunning }
            try await withManager { bus in
                _ = try await bus.call(destination: Self.manager, path: Self.managerPath, interface: Self.managerInterface,
                                       method: "StartUnit", arguments: [.string(unit), .string("replace")])
            }
            return .started
        } catch let error as DBusError {
            return .failed("\(error.name.rawValue): \(error.message)")
        } catch {
            return .failed("\(error)")
        }
    }

    /// Checks that `uid` may name `unit` and that the manager knows it.
    /// - Throws: ``RelinkError/notPermitted(_:)`` for a user other than
    ///   root; ``RelinkError/notActivatable(_:)`` when the manager cannot
    ///   be reached or has no such unit (its `LoadState` is not `loaded`).
    func check(_ unit: String, uid: UInt32) async throws(RelinkError) {
        if case .refused(let why) = LaunchPermission.decide(unit: unit, uid: uid) { throw .notPermitted(why) }
        let state: String?
        do {
            state = try await withManager { bus in
                let loaded = try await bus.call(destination: Self.manager, path: Self.managerPath, interface: Self.managerInterface,
                                                method: "LoadUnit", arguments: [.string(unit)])
                guard case .objectPath(let path)? = loaded.body.first else { return nil }
                let reply = try await bus.call(destination: Self.manager, path: path, interface: "org.freedesktop.DBus.Properties",
                                               method: "Get", arguments: [.string("org.freedesktop.systemd1.Unit"), .string("LoadState")])
                guard case .variant(.string(let s))? = reply.body.first else { return nil }
                return s
            }
        } catch {
            throw .notActivatable("the systemd manager cannot be asked for \(unit): \(error)")
        }
        guard state == "loaded" else {
            throw .notActivatable("the systemd manager has no unit \(unit) (LoadState \(state ?? "unknown"))")
        }
    }

    /// Runs `body` with the manager's bus: relinkd's own, or a connection
    /// made for the call and closed after it.
    private func withManager<T: Sendable>(_ body: (Connection) async throws -> T) async throws -> T {
        guard let managerAddress else { return try await body(relinkdBus) }
        let bus = try await Connection.connect(to: .address(managerAddress))
        defer { bus.close() }
        return try await body(bus)
    }
}
