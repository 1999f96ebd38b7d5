import BenchSupport
import Foundation
import Systemd
import Testing

/// relinkd logging to a real systemd-journald: journald runs in a private
/// mount namespace made by bench/private-journald.sh (tmpfs over
/// /run/systemd, /run/log and /var/log/journal, so the machine's journal is
/// never touched) and relinkd is started inside that namespace with `nsenter`, on the bench's bus (its socket is under
/// /tmp, which the namespace shares). The entries are read back with
/// `journalctl -o json` after a restore and a reconnect.
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(if: getuid() == 0, "needs root: unshare -m and tmpfs mounts for a private journald"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: PrivateJournal.journald), "no systemd-journald"))
struct JournalTests {
    @Test func decisionsOfARestoreAndAReconnectAreInTheJournalWithRelinkFields() async throws {
        let journal = try await PrivateJournal.start()
        let entries: [[String: Any]]
        do {
            try await Harness.with(launch: .init(prefix: journal.enterPrefix, logDestination: "journal")) { h in
                try await h.connectAndSubscribeLock()
                try await h.push([1, 2, 3])
                h.killRelinkd()
                try await h.startRelinkd()
                try await h.waitForEvents("restored", count: 1)
                try await h.bench.outOfRange("lock")
                try await h.waitForEvents("disconnected", count: 1)
                // At least one connect fails while the lock is away (asserted below).
                try await h.waitUntilLookingForTheLock()
                try await h.bench.inRange("lock")
                try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            }
            entries = try await journal.stopAndRead()
        } catch {
            _ = try? await journal.stopAndRead()
            throw error
        }
        let relinkd = entries.filter { $0["SYSLOG_IDENTIFIER"] as? String == "relinkd" }
        #expect(!relinkd.isEmpty, "no entry of relinkd in the journal")
        func with(_ id: RelinkMessageID) -> [[String: Any]] { relinkd.filter { $0["MESSAGE_ID"] as? String == id.id } }

        // Started twice, each READY after its restore from the store: the
        // first from an empty store, the second with the lock's intent.
        #expect(with(.started).count == 2)
        let restored = with(.restored)
        #expect(restored.compactMap { $0["RELINK_INTENTS"] as? String } == ["0", "1"])

        // The reconnect: connect failures while out of range, then connected.
        let failures = with(.connectFailed)
        #expect(!failures.isEmpty)
        for f in failures {
            #expect(f["RELINK_RESTORE_ID"] as? String == Harness.id)
            #expect(f["RELINK_ERROR"] as? String == "org.bluez.Error.Failed")
            #expect(f["RELINK_STRATEGY"] != nil)
            #expect(Int(f["RELINK_ATTEMPT"] as? String ?? "") != nil)
            #expect(f["PRIORITY"] as? String == "5")
        }
        let connected = with(.connected)
        #expect(connected.count >= 2)
        #expect(Set(connected.compactMap { $0["RELINK_PERIPHERAL"] as? String }).count == 1)
        #expect(with(.disconnected).count >= 1)
        // Events have their line at info (6), except values (and
        // advertisements), which are at debug (7): a streaming band would
        // flood the journal. (The harness runs relinkd at debug.)
        func priorities(_ name: String) -> [String] {
            relinkd.filter { ($0["MESSAGE"] as? String)?.hasPrefix("event \(name) (identifier \(Harness.id), ") == true }.compactMap { $0["PRIORITY"] as? String }
        }
        // Each line's text names what it is about, not only its fields (issue 21, item 13).
        let armed = relinkd.filter { ($0["MESSAGE"] as? String)?.hasPrefix("notifications armed") == true }
        #expect(!armed.isEmpty)
        for entry in armed {
            let message = entry["MESSAGE"] as? String ?? ""
            #expect(message.contains("device \(entry["RELINK_ADDRESS"] as? String ?? "?")") && message.contains("characteristic "), "\(message)")
        }
        #expect(priorities("connected").count >= 2 && Set(priorities("connected")) == ["6"])
        #expect(priorities("value-notified").count == 3 && Set(priorities("value-notified")) == ["7"])
        for e in relinkd {
            #expect((e["CODE_FILE"] as? String)?.hasSuffix(".swift") == true)
            #expect(e["CODE_LINE"] != nil && e["CODE_FUNC"] != nil)
        }
    }

    /// Issue 21, item 12: a store that cannot be opened left no journal entry
    /// (only SQLite's "unable to open database file (14)" on stderr).
    @Test func aStoreThatCannotBeOpenedIsInTheJournalWithPathCauseAndFix() async throws {
        let journal = try await PrivateJournal.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-journal-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/state/relink.sqlite"
        let result: (status: Int32, reason: Process.TerminationReason, output: String)
        let entries: [[String: Any]]
        do {
            try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
            result = try RelinkdProcess.runToEnd(journal.enterPrefix + [
                RelinkdProcess.executable.path, "--bus-address", "unix:path=\(directory)/no-bus",
                "--state-directory", directory + "/state", "--log-destination", "journal",
            ], viaPrefix: true)
            entries = try await journal.stopAndRead()
        } catch {
            _ = try? await journal.stopAndRead()
            throw error
        }
        #expect(result.reason == .exit && result.status == 66, "\(result.output)")
        let critical = entries.filter { $0["SYSLOG_IDENTIFIER"] as? String == "relinkd" && $0["PRIORITY"] as? String == "2" }
        #expect(critical.count == 1, "\(entries.compactMap { $0["MESSAGE"] })")
        let entry = try #require(critical.first)
        #expect(entry["RELINK_STORE_PATH"] as? String == database)
        #expect(entry["RELINK_EXIT_STATUS"] as? String == "66")
        let message = entry["MESSAGE"] as? String ?? ""
        #expect(message.contains(database) && message.contains("not a regular file") && message.contains("Fix: "), "\(message)")
    }
}

/// A systemd-journald of its own in a private mount namespace, held by a
/// shell that waits for a stop file, then dumps the journal and ends.
struct PrivateJournal {
    static let journald = "/lib/systemd/systemd-journald"
    let holder: Process
    let directory: String

    /// The prefix that runs a command inside the namespace.
    var enterPrefix: [String] { ["/usr/bin/nsenter", "--mount=/proc/\(holder.processIdentifier)/ns/mnt", "--"] }

    /// Runs inside the namespace, next to the journald that
    /// bench/private-journald.sh started: holds until told to stop, then
    /// dumps the journal.
    private static let script = #"""
        set -eu
        touch "$OUT/ready"
        until [ -e "$OUT/stop" ]; do sleep 0.05; done
        journalctl --sync 2>/dev/null || sleep 0.5
        journalctl -o json > "$OUT/journal.json"
        """#

    static var launcher: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("bench/private-journald.sh").path
    }

    static func start() async throws -> PrivateJournal {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relink-journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: launcher)
        p.arguments = ["/bin/sh", "-c", script]
        p.environment = ["JOURNALD": journald, "OUT": directory, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        try p.run()
        let journal = PrivateJournal(holder: p, directory: directory)
        do {
            // A generous bound: journald starts slowly on a loaded machine.
            try await eventually(timeout: .seconds(30), "the private journald") {
                FileManager.default.fileExists(atPath: directory + "/ready") || !p.isRunning
            }
        } catch {
            journal.abandon()
            throw error
        }
        guard p.isRunning else { throw CocoaError(.executableLoad, userInfo: ["reason": "journald namespace failed: \(p.terminationStatus)"]) }
        return journal
    }

    /// Ends the namespace without reading it (a failed start or read): the
    /// holder and its journald must not outlive the test, or `swift test`
    /// waits for their end of its output pipe forever.
    func abandon() {
        _ = FileManager.default.createFile(atPath: directory + "/stop", contents: nil)
        if holder.isRunning { holder.terminate() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Ends the namespace (journald stops with it) and returns every entry.
    func stopAndRead() async throws -> [[String: Any]] {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(atPath: directory + "/stop", contents: nil)
        do {
            try await eventually(timeout: .seconds(20), "the journal dump") { !holder.isRunning }
        } catch {
            if holder.isRunning { holder.terminate() }
            throw error
        }
        let text = try String(contentsOfFile: directory + "/journal.json", encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }
}
