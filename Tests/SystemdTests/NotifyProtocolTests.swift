import Foundation
import Testing

/// sd_notify and the watchdog as systemd sees them: the probe executable plays
/// the daemon with `$NOTIFY_SOCKET` pointing at a datagram socket we read.
/// Serialized: the ping counts are timing-based, so keep these off each other's cores.
@Suite(.serialized)
struct NotifyProtocolTests {
    @Test func startupSendsExtendStatusThenReadyAndSigtermSendsStopping() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let listener = try NotifyListener(directory: directory)
            let child = try ChildProcess(
                TestPaths.probe, ["notify"], environment: ["NOTIFY_SOCKET": listener.path], directory: directory)
            defer { child.kill() }

            let startup = try #require(
                await listener.collect(until: { $0.hasPrefix("READY=1") }, timeout: .seconds(20)),
                "no READY=1; stderr: \(child.stderr)")
            #expect(startup == [
                "EXTEND_TIMEOUT_USEC=5000000",
                "STATUS=loading state from the store",  // the newline became a space
                "READY=1\nSTATUS=1 identifier, 0 connected, 1 pending",
            ])
            // No watchdog was asked for, so no pings.
            #expect(await listener.collect(for: .milliseconds(300)).isEmpty)
            #expect(child.stdout.contains("watchdog-period-usec=none"))

            child.signal(SIGTERM)
            // Generous: the whole suite loads both cores (a deadline, not a timing).
            #expect(await child.exitStatus(within: .seconds(30)) == 0)
            #expect(listener.drain() == ["STOPPING=1"], "stderr: \(child.stderr)")
            #expect(child.stderr.contains("MESSAGE_ID=440ed7ebbefa48ddb0e04a0885029f02"))
        }
    }

    @Test func watchdogPingsAtHalfTheTimeoutStopWhileStalledAndResume() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let listener = try NotifyListener(directory: directory)
            let child = try ChildProcess(
                TestPaths.probe, ["notify"],
                environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000"], directory: directory)
            defer { child.kill() }
            _ = try #require(
                await listener.collect(until: { $0.hasPrefix("READY=1") }, timeout: .seconds(20)),
                "no READY=1; stderr: \(child.stderr)")
            #expect(child.stdout.contains("watchdog-period-usec=100000"))

            // 100 ms period (checked above from the probe's own report): about
            // 10 pings a second. The bounds only catch a dead pinger or a tight
            // loop; a loaded machine delays pings and the collector's window
            // alike (a CI run saw 15), so they are not a timing assertion.
            let running = await listener.collect(for: .seconds(1))
            #expect(running.allSatisfy { $0 == "WATCHDOG=1" })
            #expect((4...40).contains(running.count), "pings in 1 s: \(running.count)")

            child.signal(SIGUSR1)  // stall the liveness probe
            // Once the probe says it withholds pings, a ping sent before is
            // already in the socket: drop it, then watch for silence.
            try await eventually(timeout: .seconds(20), "the probe to withhold pings") {
                child.stderr.contains("withholding watchdog pings")
            }
            _ = listener.drain()
            let stalled = await listener.collect(for: .seconds(1))
            #expect(stalled.isEmpty, "pings while stalled: \(stalled)")

            child.signal(SIGUSR2)  // the loop answers again
            let resumed = await listener.collect(for: .seconds(1))
            #expect(resumed.count >= 4, "pings after resume: \(resumed.count)")

            child.signal(SIGTERM)
            #expect(await child.exitStatus(within: .seconds(10)) == 0)
            let log = child.stderr
            #expect(log.contains("withholding watchdog pings MESSAGE_ID=f1f262de6d254e84b4fa96efd9ca4cee"))
            #expect(log.contains("watchdog pings resumed"))
        }
    }

    /// systemd must never hear READY=1 after STOPPING=1 (issue 21, item 10:
    /// SIGTERM during start-up, then start-up ended and sent READY=1): once
    /// a notifier, or a copy of it, sent STOPPING=1, READY=1 is not sent.
    @Test func readyIsNeverSentAfterStopping() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let listener = try NotifyListener(directory: directory)
            let result = try await TestPaths.run(
                TestPaths.probe, ["ready-after-stopping"], environment: ["NOTIFY_SOCKET": listener.path], timeout: .seconds(20))
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let sent = try #require(await listener.collect(until: { $0 == "STATUS=done" }, timeout: .seconds(10)), "no end marker")
            #expect(sent == ["STOPPING=1", "STATUS=done"])
            #expect(result.stdout.contains("ready-sent=false"), "stdout: \(result.stdout)")
        }
    }

    @Test func watchdogMeantForAnotherProcessIsIgnored() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let listener = try NotifyListener(directory: directory)
            let child = try ChildProcess(
                TestPaths.probe, ["notify"],
                environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"],
                directory: directory)
            defer { child.kill() }
            _ = try #require(await listener.collect(until: { $0.hasPrefix("READY=1") }, timeout: .seconds(20)))
            #expect(child.stdout.contains("watchdog-period-usec=none"))
            #expect(await listener.collect(for: .milliseconds(400)).isEmpty)
        }
    }

    @Test func malformedWatchdogTimeoutIsATypedError() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let listener = try NotifyListener(directory: directory)
            let result = try await TestPaths.run(
                TestPaths.probe, ["notify"],
                environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "soon"], timeout: .seconds(20))
            #expect(result.status == 1)
            #expect(result.stderr.contains("invalidWatchdogEnvironment"), "stderr: \(result.stderr)")
            #expect(listener.drain().isEmpty)
        }
    }

    @Test func withoutNotifySocketNothingIsSentAndNothingFails() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let child = try ChildProcess(TestPaths.probe, ["notify"], environment: [:], directory: directory)
            defer { child.kill() }
            try? await eventually(timeout: .seconds(20), "the probe to say it is ready") {
                child.stderr.contains("relink-systemd-probe: ready")
            }
            #expect(child.stderr.contains("relink-systemd-probe: ready"), "stderr: \(child.stderr)")
            child.signal(SIGTERM)
            #expect(await child.exitStatus(within: .seconds(10)) == 0)
            #expect(!child.stderr.contains("failed"), "stderr: \(child.stderr)")
        }
    }
}
