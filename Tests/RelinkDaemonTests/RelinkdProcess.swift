import BenchSupport
import Foundation

// RelinkdProcess, eventually and TimeoutError moved to BenchSupport (shared
// with RelinkctlTests); these names keep this module's files unchanged.
typealias RelinkdProcess = BenchSupport.RelinkdProcess
typealias TimeoutError = BenchSupport.TimeoutError

/// Polls `condition` until it holds, or throws after `timeout` (BenchSupport's).
func eventually(timeout: Duration, _ what: String, _ condition: () async -> Bool) async throws {
    try await BenchSupport.eventually(timeout: timeout, what, condition)
}

extension RelinkdProcess {
    /// Runs relinkd with `arguments` to its end (as user `uid` through
    /// `setpriv` when given; the tests run as root) and returns how it
    /// ended and all it wrote to stdout and stderr. With `viaPrefix`,
    /// `arguments` is a whole command line (such as `nsenter ... -- relinkd ...`).
    static func runToEnd(_ arguments: [String], asUser uid: UInt32? = nil, viaPrefix: Bool = false) throws
        -> (status: Int32, reason: Process.TerminationReason, output: String) {
        let p = Process()
        if viaPrefix, let command = arguments.first {
            p.executableURL = URL(fileURLWithPath: command)
            p.arguments = Array(arguments.dropFirst())
        } else if let uid {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", executable.path] + arguments
        } else {
            p.executableURL = executable
            p.arguments = arguments
        }
        let pipe = Pipe()
        p.standardError = pipe
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, p.terminationReason, String(decoding: data, as: UTF8.self))
    }
}
