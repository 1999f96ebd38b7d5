import BlueZFake
import Foundation
@testable import RelinkDaemon
import Testing

/// relinkd's inbox has no bound by count (docs/architecture.md, "Queues and
/// their bounds"): `Status` says how many inputs wait and the most that ever
/// did, so an operator sees it grow (issue 33, item 4).
@Suite("Daemon in-process: the inbox in Status")
struct InboxDepthTests {
    @Test func statusShowsTheQueuedInputsAndTheirHighWaterMark() async throws {
        let d = try await InProcessDaemon(fake: FakeBlueZ(), directory: try InProcessDaemon.temporaryDirectory())
        let before = try Self.inbox(try await d.daemon.statusJSON())
        #expect(before.highWater >= 1 && before.highWater < 40, "\(before)")
        // The loop held for a moment while 40 inputs arrive: they queue.
        d.daemon.stallForTesting(.milliseconds(300))
        for _ in 0..<40 { d.daemon.inputContinuation.yield(.startSpawned) }
        let after = try Self.inbox(try await d.daemon.statusJSON())
        #expect(after.highWater >= 41, "the stall and the 40 inputs waited together: \(after)")
        #expect(after.queued >= 0 && after.queued < 41, "the 40 were handled before the status request: \(after)")
        await d.stop()
    }

    static func inbox(_ json: String) throws -> (queued: Int, highWater: Int) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let inbox = try #require(object["inbox"] as? [String: Any], "no inbox in \(json)")
        return (try #require(inbox["queued"] as? Int), try #require(inbox["highWater"] as? Int))
    }
}
