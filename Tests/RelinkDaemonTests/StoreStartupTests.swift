import Foundation
import Testing

/// relinkd's start-up against its state directory: one relinkd per
/// directory, and a store moved aside shows in `Status`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StoreStartupTests {
    /// Runs relinkd on `state` on a bus it cannot reach (what stops it
    /// first must be the state directory) and returns its exit status and output.
    private func runSecond(state: String, bus: String) throws -> (status: Int32, output: String) {
        let result = try RelinkdProcess.runToEnd(["--bus-address", bus, "--state-directory", state, "--log-destination", "stderr"])
        return (result.status, result.output)
    }

    @Test func aSecondRelinkdOnTheSameStateDirectoryExitsNamingTheFirst() async throws {
        try await Harness.with { h in
            try await h.control.register("lockA")
            let first = try #require(h.relinkd)
            let state = h.directory + "/state"
            let second = try runSecond(state: state, bus: "unix:path=\(h.directory)/no-bus")
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

    @Test func aQuarantinedStoreShowsInStatusWithPathReasonAndTime() async throws {
        try await Harness.with { h in
            let quiet = try await h.control.status()
            #expect((quiet["quarantined"] as? [Any])?.isEmpty == true, "\(quiet)")
            try await h.control.register("lockA")
            #expect(h.stopRelinkd() == 0)
            let database = h.directory + "/state/relink.sqlite"
            try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: database))
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            try await h.startRelinkd()
            let after = Int64(Date().timeIntervalSince1970 * 1000)
            let status = try await h.control.status()
            let entries = try #require(status["quarantined"] as? [[String: Any]], "\(status)")
            #expect(entries.count == 1)
            let entry = try #require(entries.first)
            #expect(entry["path"] as? String == database)
            #expect(entry["reason"] as? String == "corrupt")
            #expect((entry["message"] as? String)?.contains("corrupt") == true)
            let movedTo = try #require(entry["movedTo"] as? String)
            #expect(movedTo.hasPrefix(h.directory + "/state/quarantine/relink-") && movedTo.hasSuffix("-corrupt.sqlite"))
            #expect(FileManager.default.fileExists(atPath: movedTo))
            let at = try #require((entry["atMs"] as? NSNumber)?.int64Value)
            #expect(at >= before - 1000 && at <= after + 1000)
        }
    }
}
