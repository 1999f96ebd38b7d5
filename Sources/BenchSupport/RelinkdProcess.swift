public import Foundation

/// relinkd run as its own process from the build products directory, with
/// its log in a file; killed with SIGKILL (or SIGTERM) by the tests.
public final class RelinkdProcess: Sendable {
    public let process: Process
    /// Where relinkd's stdout and stderr go.
    public let logPath: String

    /// The relinkd executable next to the test bundle (or in `.build/debug`).
    public static var executable: URL { BuildProducts.executable("relinkd") }

    /// How to launch relinkd.
    public struct Launch: Sendable {
        /// A command that execs the rest of its arguments (so the pid stays
        /// relinkd's), e.g. `nsenter --mount=/proc/PID/ns/mnt --`.
        public var prefix: [String]
        public var logDestination: String

        public init(prefix: [String] = [], logDestination: String = "stderr") {
            self.prefix = prefix
            self.logDestination = logDestination
        }
    }

    /// Starts relinkd on `bus` with its store in `stateDirectory`
    /// (`extraArguments` after the usual ones, e.g. `--config FILE`).
    /// - Throws: when the process cannot be launched.
    public static func start(bus: String, stateDirectory: String, logPath: String, environment: [String: String] = [:],
                      launch: Launch = Launch(), extraArguments: [String] = []) throws -> RelinkdProcess {
        let p = Process()
        let arguments = ["--bus-address", bus, "--state-directory", stateDirectory,
                         "--log-destination", launch.logDestination, "--log-level", "debug"] + extraArguments
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
        var childEnvironment = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "STATE_DIRECTORY", "JOURNAL_STREAM"] { childEnvironment[name] = nil }
        childEnvironment["RELINK_CONTROL_INTERFACE"] = "1"  // the tests drive relinkd through its test interface
        childEnvironment.merge(environment) { $1 }
        p.environment = childEnvironment
        try p.run()
        return RelinkdProcess(process: p, logPath: logPath)
    }

    private init(process: Process, logPath: String) {
        self.process = process
        self.logPath = logPath
    }

    public var pid: Int32 { process.processIdentifier }

    /// SIGKILL, then reap.
    public func kill9() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGTERM, then reap; returns the exit status.
    public func terminate() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
