import Foundation
import RelinkAPI
import Restoration

/// A command relinkd runs as another user: the executable and its
/// arguments as a list (no shell), the environment it gets (nothing else),
/// and how long it may take.
public struct UserCommand: Sendable, Hashable {
    /// The user it runs as.
    public var uid: UInt32
    /// That user's primary group.
    public var gid: UInt32
    /// The program (a path) and its arguments.
    public var arguments: [String]
    /// Its whole environment.
    public var environment: [String: String]
    /// How long it may run before it is killed.
    public var timeout: Duration

    /// - Parameters: as the properties.
    public init(uid: UInt32, gid: UInt32, arguments: [String], environment: [String: String], timeout: Duration) {
        self.uid = uid
        self.gid = gid
        self.arguments = arguments
        self.environment = environment
        self.timeout = timeout
    }
}

/// How a ``UserCommand`` ended.
public enum UserCommandResult: Sendable, Hashable {
    /// It exited with this status and wrote this.
    case exited(Int32, stdout: String, stderr: String)
    /// It ran longer than its timeout and was killed.
    case timedOut
    /// It could not be run at all (the text says why).
    case notRun(String)
}

/// The port through which relinkd runs a command as a user: production
/// drops privileges with setpriv (``SetprivRunner``); in-process tests
/// answer as told.
public protocol UserCommandRunner: Sendable {
    /// Runs `command` off the caller's task and returns how it ended (never throws).
    func run(_ command: UserCommand) async -> UserCommandResult
}

/// Starts a user's launch spec unit on that user's own systemd manager
/// (docs/relaunch.md#systemd): `systemctl --user start UNIT`, run *as the
/// identifier's owner* with that user's `XDG_RUNTIME_DIR`, so the only
/// manager it can reach is the owner's own (another user's runtime
/// directory and manager refuse the owner). Root's specs go to the system
/// manager (``SystemdUnitStarter``), never here.
struct UserUnitStarter: Sendable {
    /// Runs systemctl as the user.
    let runner: any UserCommandRunner
    /// The user's runtime directory, `%U` standing for the uid
    /// (`/run/user/%U`; relinkd's `--user-runtime-directory`).
    let runtimeDirectoryPattern: String
    /// How long systemctl may take (a `Type=dbus` unit is started once it owns its name).
    var timeout: Duration = .seconds(30)

    /// systemctl's exit status for a unit it does not know (`EXIT_PROGRAM_NOT_INSTALLED`).
    static let unitNotFoundStatus: Int32 = 5
    /// coreutils timeout(1)'s status when the command was killed at its timeout.
    static let timedOutStatus: Int32 = 124

    /// The runtime directory of `uid`.
    func runtimeDirectory(of uid: UInt32) -> String {
        runtimeDirectoryPattern.replacingOccurrences(of: "%U", with: String(uid))
    }

    /// The systemctl command for `uid` with `arguments` after `--user`.
    func command(_ arguments: [String], uid: UInt32, gid: UInt32) -> UserCommand {
        let dir = runtimeDirectory(of: uid)
        return UserCommand(uid: uid, gid: gid, arguments: ["systemctl", "--user"] + arguments,
                           environment: ["XDG_RUNTIME_DIR": dir, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/bus",
                                         "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C", "SYSTEMD_PAGER": "", "SYSTEMD_COLORS": "0"],
                           timeout: timeout)
    }

    /// Starts `unit` on `uid`'s manager. The name is checked again here
    /// (``LaunchOptions/isUnitName(_:)``): it reaches systemctl as one argument after `--`.
    func start(_ unit: String, uid: UInt32, gid: UInt32) async -> LaunchStartOutcome {
        guard LaunchOptions.isUnitName(unit) else { return .failed("\(unit) is not a service unit name: not started") }
        let result = await runner.run(command(["start", "--", unit], uid: uid, gid: gid))
        return Self.startOutcome(result, unit: unit, uid: uid, runtimeDirectory: runtimeDirectory(of: uid))
    }

    /// Checks that `uid`'s manager knows `unit` (its `LoadState` is `loaded`).
    /// - Throws: `NotActivatable` when it does not;
    ///   `NotReady` when the user's manager is not
    ///   running; `Failed` when systemctl fails otherwise.
    func check(_ unit: String, uid: UInt32, gid: UInt32) async throws(RelinkError) {
        guard LaunchOptions.isUnitName(unit) else { throw RelinkError(.invalidArguments, "\(unit) is not a service unit name") }
        let result = await runner.run(command(["show", "--property=LoadState", "--value", "--", unit], uid: uid, gid: gid))
        try Self.checkOutcome(result, unit: unit, uid: uid, runtimeDirectory: runtimeDirectory(of: uid))
    }

    /// What `systemctl --user start` ended with, as a start's outcome; the
    /// failure texts name the user and the unit (the journal's
    /// `relaunch-failed` line and `relinkctl show`'s `last_error` show them),
    /// prefixed with the typed error's name where one fits.
    static func startOutcome(_ result: UserCommandResult, unit: String, uid: UInt32, runtimeDirectory: String) -> LaunchStartOutcome {
        switch result {
        case .exited(0, _, _):
            return .started
        case .exited(let status, _, let stderr):
            do throws(RelinkError) {
                try failure(status: status, stderr: stderr, unit: unit, uid: uid, runtimeDirectory: runtimeDirectory, doing: "start")
                return .failed("systemctl --user start \(unit) as uid \(uid) exited \(status)")
            } catch {
                return .failed(error.description)
            }
        case .timedOut:
            return .failed("systemctl --user start \(unit) as uid \(uid) did not finish in time: killed")
        case .notRun(let why):
            return .failed("cannot run systemctl as uid \(uid) to start \(unit): \(why)")
        }
    }

    /// What `systemctl --user show --property=LoadState --value` ended with.
    static func checkOutcome(_ result: UserCommandResult, unit: String, uid: UInt32, runtimeDirectory: String) throws(RelinkError) {
        switch result {
        case .exited(0, let stdout, _):
            let state = stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            guard state == "loaded" else {
                throw RelinkError(.notActivatable, "the systemd user manager of uid \(uid) has no unit \(unit) (LoadState \(state.isEmpty ? "unknown" : state))")
            }
        case .exited(let status, _, let stderr):
            try failure(status: status, stderr: stderr, unit: unit, uid: uid, runtimeDirectory: runtimeDirectory, doing: "check")
            throw RelinkError(.failed, "systemctl --user show \(unit) as uid \(uid) exited \(status)")
        case .timedOut:
            throw RelinkError(.failed, "systemctl --user show \(unit) as uid \(uid) did not finish in time: killed")
        case .notRun(let why):
            throw RelinkError(.failed, "cannot run systemctl as uid \(uid) to check \(unit): \(why)")
        }
    }

    /// Throws the typed error a failed systemctl's status and stderr say, if one does.
    private static func failure(status: Int32, stderr: String, unit: String, uid: UInt32, runtimeDirectory: String, doing: String) throws(RelinkError) {
        let said = stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        if status == timedOutStatus {
            throw RelinkError(.failed, "systemctl --user \(doing) \(unit) as uid \(uid) did not finish in time: killed")
        }
        if said.contains("Failed to connect to bus") || said.contains("Failed to connect to user scope bus") {
            throw RelinkError(.notReady, "the systemd user manager of uid \(uid) is not running (nothing answers in \(runtimeDirectory)): \(unit) cannot be started; systemctl: \(said)")
        }
        if status == unitNotFoundStatus || said.contains("not found") || said.contains("not loaded") {
            throw RelinkError(.notActivatable, "the systemd user manager of uid \(uid) has no unit \(unit): \(said)")
        }
        if !said.isEmpty {
            throw RelinkError(.failed, "systemctl --user \(doing) \(unit) as uid \(uid) exited \(status): \(said)")
        }
    }
}

/// Runs a ``UserCommand`` as its user: `setpriv --reuid --regid
/// --init-groups -- timeout --signal=KILL SECONDS PROGRAM ARGS...`, with
/// only the command's environment (KILL: a signal relinkd ignores is
/// ignored by its children too). Waits off the loop (the process's
/// termination handler resumes the caller).
public struct SetprivRunner: UserCommandRunner {
    /// Where setpriv (util-linux) and timeout (coreutils) are looked for.
    static let searchPath = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]

    /// A runner; finds its tools when it runs.
    public init() {}

    public func run(_ command: UserCommand) async -> UserCommandResult {
        guard let setpriv = Self.find("setpriv"), let timeout = Self.find("timeout"), let program = command.arguments.first.flatMap(Self.find) else {
            return .notRun("setpriv (util-linux), timeout (coreutils) or \(command.arguments.first ?? "the program") is not installed in \(Self.searchPath.joined(separator: ":"))")
        }
        let seconds = max(1, Int(command.timeout.components.seconds))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments = ["--reuid=\(command.uid)", "--regid=\(command.gid)", "--init-groups", "--",
                             timeout, "--signal=KILL", "\(seconds)", program] + command.arguments.dropFirst()
        process.environment = command.environment
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let status: Int32? = await withCheckedContinuation { continuation in
            // A death by a signal: timeout(1) killed the command and re-raised the signal.
            process.terminationHandler = { p in
                continuation.resume(returning: p.terminationReason == .uncaughtSignal ? 128 + p.terminationStatus : p.terminationStatus)
            }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(returning: nil)
            }
        }
        guard let status else { return .notRun("cannot execute \(setpriv)") }
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if status == UserUnitStarter.timedOutStatus || status == 128 + SIGKILL { return .timedOut }
        return .exited(status, stdout: stdout, stderr: stderr)
    }

    /// The path of `name` in ``searchPath``; `name` itself when it is a path.
    static func find(_ name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        return searchPath.lazy.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
