import Foundation

/// Where the things the tests run are.
enum TestPaths {
    /// The package's root directory (this file is Tests/SystemdTests/Support/TestPaths.swift).
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The built `relink-systemd-probe`, next to the test bundle.
    static var probe: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        let directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        return directory.appendingPathComponent("relink-systemd-probe").path
    }

    static let journald = "/lib/systemd/systemd-journald"

    static var isRoot: Bool { getuid() == 0 }

    /// A fresh temporary directory, removed by `body`'s end.
    static func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("relink-systemd-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    /// Runs a command to completion with a minimal environment; status and output.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32?, stdout: String, stderr: String) {
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(executable, arguments, environment: environment, directory: directory)
            let status = await child.exitStatus(within: timeout)
            child.kill()
            return (status, child.stdout, child.stderr)
        }
    }
}
