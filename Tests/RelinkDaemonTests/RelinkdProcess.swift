import Foundation

/// relinkd run as its own process from the build products directory, with
/// its log in a file; killed with SIGKILL (or SIGTERM) by the tests.
final class RelinkdProcess: Sendable {
    let process: Process
    let logPath: String

    /// The relinkd executable next to the test bundle (or in `.build/debug`).
    static var executable: URL {
        let fromBundle = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent().appendingPathComponent("relinkd")
        if FileManager.default.isExecutableFile(atPath: fromBundle.path) { return fromBundle }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/relinkd")
    }

    /// How to launch relinkd.
    struct Launch: Sendable {
        /// A command that execs the rest of its arguments (so the pid stays
        /// relinkd's), e.g. `nsenter --mount=/proc/PID/ns/mnt --`.
        var prefix: [String] = []
        var logDestination = "stderr"
    }

    /// Starts relinkd on `bus` with its store in `stateDirectory`.
    /// - Throws: when the process cannot be launched.
    static func start(bus: String, stateDirectory: String, logPath: String, environment: [String: String] = [:],
                      launch: Launch = Launch()) throws -> RelinkdProcess {
        let p = Process()
        let arguments = ["--bus-address", bus, "--state-directory", stateDirectory,
                         "--log-destination", launch.logDestination, "--log-level", "debug"]
        if let command = launch.prefix.first {
            p.executableURL = URL(fileURLWithPath: command)
            p.arguments = Array(launch.prefix.dropFirst()) + [executable.path] + arguments
        } else {
            p.executableURL = executable
            p.arguments = arguments
        }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        try log.seekToEnd()
        p.standardError = log
        p.standardOutput = log
        var env = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "STATE_DIRECTORY", "JOURNAL_STREAM"] { env[name] = nil }
        env.merge(environment) { $1 }
        p.environment = env
        try p.run()
        return RelinkdProcess(process: p, logPath: logPath)
    }

    private init(process: Process, logPath: String) {
        self.process = process
        self.logPath = logPath
    }

    var pid: Int32 { process.processIdentifier }

    /// SIGKILL, then reap.
    func kill9() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGTERM, then reap; returns the exit status.
    func terminate() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
