import BenchSupport
import Foundation
import Testing

/// Names: the advertising and GAP names each raise `name-updated` once,
/// a relinkd restart does not report them again, and a new GAP name does.
@Suite(.serialized, .timeLimit(.minutes(2))) struct NameTests {
    /// (source, current, resolved) of each name-updated event.
    func updates(_ h: Harness) async throws -> [[String?]] {
        try await h.events("name-updated").map { event in
            let object = try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any]
            let update = (object?["nameUpdated"] as? [String: Any])?["update"] as? [String: Any]
            let change = update?["change"] as? [String: Any]
            let resolved = update?["resolved"] as? [String: Any]
            return [change?["source"] as? String, change?["current"] as? String, resolved?["name"] as? String]
        }
    }

    @Test func namesAreReportedOnceAndSurviveRestarts() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await eventually(timeout: .seconds(10), "both names") { ((try? await updates(h).count) ?? 0) >= 2 }
            let first = try await updates(h)
            #expect(first == [["advertising", "RLK-7F3A", "RLK-7F3A"], ["gap", "Front Door", "Front Door"]])
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            // What is tested is that no name is reported again: watch a while.
            try await observeQuietly(for: .seconds(1), "no name reported again after the restart") {
                (try? await updates(h)) == first
            }
            #expect(try await updates(h) == first, "a restart reported known names again")
            try await h.bench.setGapName("lock", "Back Door")
            try await h.bench.restartBlueZ()
            try await eventually(timeout: .seconds(30), "the new GAP name") { ((try? await updates(h).count) ?? 0) >= 3 }
            #expect(try await updates(h).last == ["gap", "Back Door", "Back Door"])
        }
    }
}
