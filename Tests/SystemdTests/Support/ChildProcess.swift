import Foundation

/// A child process with an explicit environment (nothing inherited, so no
/// stray `NOTIFY_SOCKET` reaches it), stdout and stderr captured in files, and
/// killed (its whole process group) when the test is done with it, also on failure.
final class ChildProcess {
    let process = Process()
    let stdoutPath: String
    let stderrPath: String

    /// Starts `executable`. Foundation makes the child a process-group leader
    /// (pgid == pid), so ``kill()`` reaches everything it started.
    init(_ executable: String, _ arguments: [String], environment: [String: String], directory: String) throws {
        stdoutPath = directory + "/child-\(UUID().uuidString).out"
        stderrPath = directory + "/child-\(UUID().uuidString).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = environment
        if environment["PATH"] == nil { environment["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" }
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        kill()
    }

    var pid: Int32 { process.processIdentifier }

    func signal(_ number: Int32) {
        if process.isRunning { Glibc.kill(pid, number) }
    }

    /// SIGKILLs the child's process group and reaps the child.
    func kill() {
        if process.isRunning {
            Glibc.kill(-pid, SIGKILL)
            Glibc.kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Waits for the child to exit; its status, or `nil` after `timeout`.
    func exitStatus(within timeout: Duration) async -> Int32? {
        do {
            try await eventually(timeout: timeout, "the child to exit") { !process.isRunning }
        } catch {
            return nil
        }
        return process.terminationStatus
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}
