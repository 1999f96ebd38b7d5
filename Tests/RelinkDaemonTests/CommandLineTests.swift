import Foundation
import Testing

/// relinkd's command line: bad options and an unreachable bus end it with
/// an error exit and a message, never a crash.
@Suite struct CommandLineTests {
    func run(_ arguments: [String]) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
        let p = Process()
        p.executableURL = RelinkdProcess.executable
        p.arguments = arguments
        let pipe = Pipe()
        p.standardError = pipe
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, p.terminationReason, String(decoding: data, as: UTF8.self))
    }

    @Test func badOptionsAreRefused() throws {
        let level = try run(["--log-level", "loud"])
        #expect(level.reason == .exit && level.status == 64)
        #expect(level.output.contains("--log-level"))
        let destination = try run(["--log-destination", "syslog"])
        #expect(destination.reason == .exit && destination.status == 64)
    }

    @Test func anUnreachableBusIsAnErrorExit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try run(["--bus-address", "unix:path=\(directory)/nobody", "--state-directory", directory, "--log-destination", "stderr"])
        #expect(result.reason == .exit && result.status != 0, "\(result.output)")
    }

    @Test func aBadAdapterNameIsAnErrorExit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try run(["--adapter", "../hci0", "--bus-address", "unix:path=\(directory)/nobody", "--state-directory", directory])
        #expect(result.reason == .exit && result.status == 64, "\(result.output)")
        #expect(result.output.contains("--adapter"))
    }
}
