import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the `relink-store-torture` executable and collects its stdout.
struct TortureProcess {
    enum Failure: Error, CustomStringConvertible {
        case notBuilt(String)
        var description: String {
            switch self {
            case .notBuilt(let dir): "relink-store-torture not found in \(dir); run `swift build --build-tests` first"
            }
        }
    }

    let executable: String

    init() throws {
        guard let path = ProductsDirectory.executable("relink-store-torture") else { throw Failure.notBuilt(ProductsDirectory.path) }
        executable = path
    }

    /// Runs to completion; returns exit status and stdout.
    /// `asUser` runs it through `setpriv` with that UID/GID and no groups (the tests run as root).
    func run(_ arguments: [String], asUser uid: UInt32? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        if let uid {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Starts a writer, SIGKILLs it after it printed `ready` and `delay` more
    /// microseconds (or `delay` after the start when `waitForReady` is false),
    /// and returns every line it printed.
    func runAndKill(_ arguments: [String], waitForReady: Bool, delay: UInt32) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = pipe.fileHandleForReading
        var output = Data()
        if waitForReady {
            while !output.starts(with: Data("ready\n".utf8)) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                output.append(chunk)
            }
        }
        usleep(delay)
        kill(process.processIdentifier, SIGKILL)
        output.append(reader.readDataToEndOfFile())
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
