import Foundation
import Testing

/// relinkd's sd_notify part: READY=1 with a STATUS= summary once the store
/// is restored, watchdog pings when WATCHDOG_USEC is set, STOPPING=1 on SIGTERM.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SystemdNotifyTests {
    @Test func readyAfterRestoreThenWatchdogThenStopping() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            h.killRelinkd()
            let listener = try NotifyListener(directory: h.directory)
            try await h.startRelinkd(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "1000000"])
            let untilReady = listener.waitFor(timeout: .seconds(10)) { $0.contains("READY=1") }
            let ready = try #require(untilReady.last { $0.contains("READY=1") }, "no READY=1 in \(untilReady)")
            #expect(ready.contains("STATUS=1 identifiers"), "READY=1 comes after the store was restored: \(ready)")
            let pings = listener.waitFor(timeout: .seconds(5)) { _ in false }.filter { $0.contains("WATCHDOG=1") }
            #expect(pings.count >= 3, "watchdog pings every 0.5 s: \(pings.count)")
            #expect(h.stopRelinkd() == 0)
            var rest: [String] = []
            while let message = listener.receive() { rest.append(message) }
            #expect(rest.contains { $0.contains("STOPPING=1") }, "\(rest)")
        }
    }
}
