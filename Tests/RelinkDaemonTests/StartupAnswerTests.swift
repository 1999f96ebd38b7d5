import DBus
import Foundation
import Testing

/// Issue 21, item 3: right after a relinkd restart a client was told
/// `UnknownIdentifier` for an identifier relinkd was still restoring (its
/// object not yet published while relinkd already owned its bus name). A
/// client that believes that answer throws its state away. Now relinkd takes
/// its bus name only once everything is restored and published: until then a
/// call finds no relinkd (retryable), never a false "unknown".
@Suite(.serialized, .timeLimit(.minutes(3))) struct StartupAnswerTests {
    @Test func aKnownIdentifierIsNeverUnknownWhileRelinkdRestores() async throws {
        try await Harness.with { h in
            // Enough identifiers that restoring them takes a while.
            let count = 400
            for n in 0..<count { try await h.control.register("lock-\(n)") }
            #expect(h.stopRelinkd() == 0)

            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let last = try ObjectPath("/org/relink/central/lock_2d\(count - 1)")
            try h.launchRelinkd()
            var answers: [String: Int] = [:]
            let deadline = ContinuousClock.now + .seconds(60)
            var restored = false
            while !restored, ContinuousClock.now < deadline {
                do {
                    _ = try await client.call(last, "org.freedesktop.DBus.Properties", "Get",
                                              [.string("org.relink.Central1"), .string("Identifier")])
                    restored = true
                    answers["ok", default: 0] += 1
                } catch let error as DBusError {
                    answers[error.name.rawValue, default: 0] += 1
                }
            }
            try await h.control.waitUntilUp()
            #expect(restored, "relinkd answered for the identifier within 60 s: \(answers)")
            let unknown = answers.filter { $0.key.hasSuffix("UnknownObject") || $0.key.hasSuffix("UnknownIdentifier") }
            #expect(unknown.isEmpty, "a stored identifier was called unknown while relinkd restored it: \(answers)")
            #expect(answers.keys.contains { $0.hasSuffix("ServiceUnknown") || $0.hasSuffix("NameHasNoOwner") },
                    "the calls did start before relinkd was reachable: \(answers)")
        }
    }

    /// A second relinkd on the same bus (its own state directory) cannot
    /// take org.relink: it exits with an error naming the holder's pid, so
    /// an operator knows which relinkd to stop (issue 38, item 4), before it
    /// creates its state directory (item 5); the first one goes on answering.
    @Test func aSecondRelinkdNamesThePidOfTheOneHoldingTheBusName() async throws {
        try await Harness.with { h in
            let first = try #require(h.relinkd?.pid)
            let second = try RelinkdProcess.start(bus: h.bench.busAddress, stateDirectory: h.directory + "/second-state",
                                                  logPath: h.directory + "/second.log")
            defer { second.kill9() }
            try await eventually(timeout: .seconds(30), "the second relinkd to exit") { !second.process.isRunning }
            second.process.waitUntilExit()
            let log = (try? String(contentsOfFile: h.directory + "/second.log", encoding: .utf8)) ?? ""
            #expect(second.process.terminationStatus != 0, "\(log.suffix(2000))")
            #expect(log.contains("is owned by another process (pid \(first), :"), "\(log.suffix(2000))")
            // Checked before any state is made (issue 38, item 5).
            #expect(!FileManager.default.fileExists(atPath: h.directory + "/second-state"), "the second relinkd created its state directory")
            #expect(try await h.control.status()["ready"] as? Bool == true, "the first relinkd still answers")
        }
    }
}
