import Foundation
@testable import RelinkDaemon
import RelinkModel
import Testing

/// The start limit across a relinkd restart (docs/relaunch.md#bounds): the
/// starts are in the store (`launch_start`), so a program started the
/// burst's number of times is not started again by the next relinkd
/// within the window.
@Suite("Daemon in-process: relaunch limit across a restart")
struct RelaunchLimitRestartTests {
    typealias Band = RestoreCycleTests

    @Test func aProgramStartedFiveTimesIsNotStartedByTheNextRelinkdWithinTheWindow() async throws {
        let clock = DaemonClock.manual()
        let (first, launcher) = try await RelaunchTests().setUp(clock: clock)
        launcher.answer(.failed("org.freedesktop.DBus.Error.Spawn.ChildExited: exited with status 1"))
        await RelaunchTests().push(first, 1)
        try await eventually("five starts, then limited", advancing: clock, by: .milliseconds(250), upTo: .seconds(29)) {
            guard launcher.starts.count >= 5 else { return false }
            return try await first.daemon.statusJSON().contains("\"state\":\"limited\"")
        }
        await first.stop()

        let again = RecordingLauncher()
        again.answer(.failed("org.freedesktop.DBus.Error.Spawn.ChildExited: exited with status 1"))
        let second = try await InProcessDaemon(fake: first.fake, directory: first.directory, clock: .manual(), launcher: again)
        try await eventually("the link restored") { await second.state(Band.id, Band.band) == "connected" }
        await RelaunchTests().push(second, 2)
        try await eventually("the value stored, and the start limit in force") {
            guard RestoreCycleTests.values(try await second.events(Band.id)).count >= 2 else { return false }
            return try await second.daemon.statusJSON().contains("\"state\":\"limited\"")
        }
        #expect(again.starts.isEmpty, "the five starts before the restart count: \(again.starts)")
        #expect(try await second.daemon.statusJSON().contains("\"startsInWindow\":5"))
        await second.stop()
    }
}
