import DBus
import Foundation
import RelinkAPI
import Restoration

/// Starts a launch spec's systemd unit (docs/relaunch.md#systemd):
/// `org.freedesktop.systemd1.Manager.StartUnit(unit, "replace")` on the
/// system manager for root's specs; any other user's spec goes to that
/// user's own manager (``UserUnitStarter``: `systemctl --user` run as the
/// user), so a user can start only units of their own manager.
/// The program owns the spec's bus name when it runs (a `Type=dbus` unit's
/// `BusName=`): a name with an owner means it already runs, and nothing is
/// started.
struct SystemdUnitStarter: Sendable {
    /// relinkd's bus, where the spec's bus name is owned.
    let relinkdBus: Connection
    /// The manager's bus; nil: relinkd's own (the system bus).
    let managerAddress: String?
    /// Where a user's (not root's) units are started.
    let user: UserUnitStarter

    static let manager = "org.freedesktop.systemd1"
    static let managerPath = ObjectPath(trusted: "/org/freedesktop/systemd1")
    static let managerInterface = "org.freedesktop.systemd1.Manager"

    /// Starts `unit` on the manager of `uid` (the spec's identifier's
    /// owner: root's is the system manager) unless `busName` already has an owner.
    func start(_ unit: String, busName: String, uid: UInt32) async -> LaunchStartOutcome {
        do {
            if try await relinkdBus.nameOwner(of: busName) != nil { return .alreadyRunning }
            if uid != 0 {
                guard let gid = Self.primaryGroup(of: uid) else { return .failed("uid \(uid) has no user on this system: \(unit) not started") }
                return await user.start(unit, uid: uid, gid: gid)
            }
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

    /// Checks that the manager of `uid` (root's: the system manager; any
    /// other user's: their own, asked as that user) knows `unit`.
    /// - Throws: `NotActivatable` when the manager cannot
    ///   be reached (root) or has no such unit (its `LoadState` is not
    ///   `loaded`); `NotReady` when a user's manager is
    ///   not running; `NotPermitted` for a uid with no user.
    func check(_ unit: String, uid: UInt32) async throws(RelinkError) {
        if uid != 0 {
            guard let gid = Self.primaryGroup(of: uid) else { throw RelinkError(.notPermitted, "uid \(uid) has no user on this system: it has no systemd manager") }
            return try await user.check(unit, uid: uid, gid: gid)
        }
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
            throw RelinkError(.notActivatable, "the systemd manager cannot be asked for \(unit): \(error)")
        }
        guard state == "loaded" else {
            throw RelinkError(.notActivatable, "the systemd manager has no unit \(unit) (LoadState \(state ?? "unknown"))")
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

    /// The primary group of `uid` (`getpwuid_r`), nil when the system has no such user.
    static func primaryGroup(of uid: UInt32) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_gid
    }
}
