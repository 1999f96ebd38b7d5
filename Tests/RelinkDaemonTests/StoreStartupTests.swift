import Foundation
import Testing

/// relinkd's start-up against its state directory: one relinkd per directory.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StoreStartupTests {
    /// Runs relinkd on `state` (on a bus it cannot reach: what stops it
    /// first must be the state directory) and returns its exit status and output.
    private func runSecond(state: String, bus: String) async throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = RelinkdProcess.executable
        p.arguments = ["--bus-address", bus, "--state-directory", state, "--log-destination", "stderr"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func aSecondRelinkdOnTheSameStateDirectoryExitsNamingTheFirst() async throws {
        try await Harness.with { h in
            try await h.control.register("lockA")
            let first = try #require(h.relinkd)
            let state = h.directory + "/state"
            let second = try await runSecond(state: state, bus: "unix:path=\(h.directory)/no-bus")
            #expect(second.status == 75, "\(second.output)")
            #expect(second.output.contains("PID \(first.pid)"), "\(second.output)")
            #expect(second.output.contains(state), "\(second.output)")
            // The first goes on with its state.
            #expect(first.process.isRunning)
            let ids = try await h.control.status()["identifiers"] as? [[String: Any]] ?? []
            #expect(ids.compactMap { $0["id"] as? String } == ["lockA"])
            #expect(h.stopRelinkd() == 0)
            try await h.startRelinkd()
            let again = try await h.control.status()["identifiers"] as? [[String: Any]] ?? []
            #expect(again.compactMap { $0["id"] as? String } == ["lockA"])
        }
    }
}
