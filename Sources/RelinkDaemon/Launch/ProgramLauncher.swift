public import DBus
import Foundation
public import RelinkAPI
public import RelinkModel
public import Restoration

/// How relinkd starts a program for its launch spec (docs/relaunch.md), and
/// checks that the caller may have it started. Production asks the bus
/// (``BusLauncher``); in-process tests inject their own.
public protocol ProgramLauncher: Sendable {
    /// Asks for the spec's program to be started (its bus name, or its
    /// systemd unit on the manager of `uid`, the identifier's owner);
    /// returns how the start went (never throws).
    func start(_ spec: LaunchSpec, uid: UInt32) async -> LaunchStartOutcome
    /// Checks that the user `uid` may have relinkd start the spec's program.
    /// - Throws: `NotActivatable` when the bus (or the
    ///   systemd manager) cannot start it; `NotPermitted`
    ///   when the user could not start it themselves (``LaunchPermission``).
    func check(_ spec: LaunchSpec, uid: UInt32) async throws(RelinkError)
}

/// Starts programs by D-Bus activation on relinkd's bus:
/// `org.freedesktop.DBus.StartServiceByName`, which the bus answers once the
/// program owns its name (or could not be started). The permission rule
/// reads the activation files in the bus's service directories.
public struct BusLauncher: ProgramLauncher {
    let connection: Connection
    /// Where the bus reads its activation files.
    let serviceDirectories: [String]
    /// How long the bus may take to start a program (its own
    /// `service_start_timeout` is 25 s by default).
    static let startTimeout: Duration = .seconds(30)

    /// The system bus's standard service directories (dbus-daemon(1), `<standard_system_servicedirs/>`).
    public static let systemServiceDirectories = [
        "/usr/local/share/dbus-1/system-services", "/usr/share/dbus-1/system-services",
        "/lib/dbus-1/system-services", "/run/dbus/system-services",
    ]

    /// Where a spec's systemd unit is started (``SystemdUnitStarter``).
    let systemd: SystemdUnitStarter

    /// - Parameters:
    ///   - connection: relinkd's bus connection.
    ///   - serviceDirectories: the bus's service directories, in its order.
    ///   - systemdManagerAddress: the bus of the systemd manager that starts
    ///     specs' units; nil: relinkd's own bus (the system bus, where
    ///     `org.freedesktop.systemd1` is the system manager).
    ///   - userRuntimeDirectory: a user's runtime directory, `%U` for the
    ///     uid, where their own manager is reached (`/run/user/%U`).
    ///   - userCommands: how a user's `systemctl --user` is run as that user.
    public init(connection: Connection, serviceDirectories: [String] = Self.systemServiceDirectories, systemdManagerAddress: String? = nil,
                userRuntimeDirectory: String = "/run/user/%U", userCommands: any UserCommandRunner = SetprivRunner()) {
        self.connection = connection
        self.serviceDirectories = serviceDirectories
        systemd = SystemdUnitStarter(relinkdBus: connection, managerAddress: systemdManagerAddress,
                                     user: UserUnitStarter(runner: userCommands, runtimeDirectoryPattern: userRuntimeDirectory))
    }

    public func start(_ spec: LaunchSpec, uid: UInt32) async -> LaunchStartOutcome {
        if let unit = spec.systemdUnit { return await systemd.start(unit, busName: spec.busName, uid: uid) }
        let busName = spec.busName
        do {
            let reply = try await connection.call(destination: "org.freedesktop.DBus", path: ObjectPath(trusted: "/org/freedesktop/DBus"),
                                                  interface: "org.freedesktop.DBus", method: "StartServiceByName",
                                                  arguments: [.string(busName), .uint32(0)], timeout: Self.startTimeout)
            // DBUS_START_REPLY_SUCCESS = 1, DBUS_START_REPLY_ALREADY_RUNNING = 2.
            if case .uint32(2)? = reply.body.first { return .alreadyRunning }
            return .started
        } catch let error as DBusError {
            return .failed("\(error.name.rawValue): \(error.message)")
        } catch {
            return .failed("\(error)")
        }
    }

    public func check(_ spec: LaunchSpec, uid: UInt32) async throws(RelinkError) {
        if let unit = spec.systemdUnit { return try await systemd.check(unit, uid: uid) }
        let busName = spec.busName
        let names: [String]
        do {
            let reply = try await connection.call(destination: "org.freedesktop.DBus", path: ObjectPath(trusted: "/org/freedesktop/DBus"),
                                                  interface: "org.freedesktop.DBus", method: "ListActivatableNames")
            guard case .array(_, let items)? = reply.body.first else { throw RelinkError(.failed, "ListActivatableNames: unexpected reply") }
            names = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        } catch let error as RelinkError {
            throw error
        } catch {
            throw RelinkError(.failed, "cannot ask the bus for its activatable names: \(error)")
        }
        guard names.contains(busName) else {
            throw RelinkError(.notActivatable, "the bus cannot start \(busName): it has no activation file for it (not among its activatable names)")
        }
        let file = activationFile(for: busName)
        if case .refused(let why) = LaunchPermission.decide(busName: busName, uid: uid, userName: Self.userName(of: uid), file: file) {
            throw RelinkError(.notPermitted, why)
        }
    }

    /// The activation file for `busName`: `NAME.service` first (as the bus
    /// prefers), else any `.service` file whose `Name=` it is, in the
    /// directories' order.
    func activationFile(for busName: String) -> DBusActivationFile? {
        let files = FileManager.default
        for directory in serviceDirectories {
            if let text = try? String(contentsOfFile: "\(directory)/\(busName).service", encoding: .utf8),
               let file = DBusActivationFile(parsing: text), file.name == busName { return file }
        }
        for directory in serviceDirectories {
            for entry in ((try? files.contentsOfDirectory(atPath: directory)) ?? []).sorted() where entry.hasSuffix(".service") {
                if let text = try? String(contentsOfFile: "\(directory)/\(entry)", encoding: .utf8),
                   let file = DBusActivationFile(parsing: text), file.name == busName { return file }
            }
        }
        return nil
    }

    /// The user's login name (`getpwuid_r`), nil when the system has none.
    static func userName(of uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }
}
