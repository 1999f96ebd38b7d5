import BenchSupport
import Synchronization
import Foundation

/// One finished run of the relinkctl executable.
struct CtlResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }

    /// stdout parsed as one JSON document.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }

    func jsonObject() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else { throw CtlError("stdout is not a JSON object: \(stdout)") }
        return object
    }
}

struct CtlError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs the built relinkctl (`.build/debug/relinkctl`) as its own process.
enum CtlProcess {
    static var executable: URL { BuildProducts.executable("relinkctl") }

    /// Runs relinkctl with `arguments` (nothing added) and waits for it (at most `timeout`, then SIGKILL).
    /// `stdin`: what relinkctl reads on its standard input (nothing: `/dev/null`).
    /// `user`: run it as that user (UID, GID; no other groups) through
    /// setpriv, as an ordinary user would run it (needs root).
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
                    timeout: Duration = .seconds(30), user: (uid: UInt32, gid: UInt32)? = nil) async throws -> CtlResult {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out"), errURL = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let p = Process()
        if let user {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--", executable.path] + arguments
        } else {
            p.executableURL = executable
            p.arguments = arguments
        }
        p.standardOutput = out
        p.standardError = err
        if let stdin {
            let inURL = directory.appendingPathComponent("in")
            try Data(stdin.utf8).write(to: inURL)
            p.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            p.standardInput = FileHandle.nullDevice
        }
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = nil
        env.merge(environment) { $1 }
        p.environment = env
        let exited = AsyncStream.makeStream(of: Int32.self)
        p.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        try p.run()
        let status = try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask { await exited.stream.first { _ in true } ?? -1 }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        try? out.close()
        try? err.close()
        guard let status else {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            throw CtlError("relinkctl \(arguments.joined(separator: " ")) did not finish in \(timeout)")
        }
        return CtlResult(status: status,
                         stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                         stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}

/// A relinkctl left running (events --follow): its stdout collected line by line.
final class CtlFollower {
    let process: Process
    let output = LineBuffer()
    let errURL: URL

    init(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = CtlProcess.executable
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        errURL = FileManager.default.temporaryDirectory.appendingPathComponent("relinkctl-follow-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        p.standardError = try FileHandle(forWritingTo: errURL)
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = nil
        p.environment = env
        let buffer = output
        try p.run()
        readToEnd(of: pipe.fileHandleForReading, chunk: { buffer.append($0) }, end: {})
        process = p
    }

    /// The lines printed so far, once `done` holds for them (or at the timeout).
    func lines(timeout: Duration = .seconds(20), until done: ([String]) -> Bool) async throws -> [String] {
        do {
            try await eventually(timeout: timeout, "relinkctl to print the awaited lines") { done(output.lines) }
        } catch is TimeoutError {}
        return output.lines
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits (bounded) for relinkctl to exit by itself and returns its
    /// status; nil if it is still running at the timeout.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        let process = self.process
        do {
            try await eventually(timeout: timeout, "relinkctl to exit by itself") { !process.isRunning }
        } catch is TimeoutError {
            return nil
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGTERM and reap; returns the termination status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: errURL)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Splits bytes into lines (thread-safe: filled from the reader's queue).
final class LineBuffer: Sendable {
    private let state = Mutex<(pending: [UInt8], lines: [String])>(([], []))

    func append(_ data: Data) {
        state.withLock { s in
            s.pending += data
            while let i = s.pending.firstIndex(of: UInt8(ascii: "\n")) {
                s.lines.append(String(decoding: s.pending[..<i], as: UTF8.self))
                s.pending.removeSubrange(...i)
            }
        }
    }

    var lines: [String] { state.withLock { $0.lines } }
}
