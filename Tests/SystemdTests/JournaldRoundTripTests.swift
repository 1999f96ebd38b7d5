import Foundation
import Testing
@testable import Systemd

/// A real systemd-journald, in a private mount namespace (tmpfs over
/// /run/systemd, /run/log and /var/log/journal, so the machine's journal is
/// never touched), receives the probe's entries; `journalctl -o json` reads them back.
@Suite(
    .enabled(if: TestPaths.isRoot, "needs root: unshare -m and mounting tmpfs for a private journald"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: TestPaths.journald), "no systemd-journald"))
struct JournaldRoundTripTests {
    /// Runs in the private namespace: start journald (no arguments: any
    /// argument names a journal namespace), run the probe at `info` and at
    /// `debug`, wait until the last entry of each is readable, dump them.
    private static let script = #"""
        set -eu
        for level in info debug; do
            "$PROBE" journal auto $level "$TAG-$level" >> "$OUT/probe.out"
            i=0
            until journalctl -o json RELINK_TEST_RUN="$TAG-$level" MESSAGE_ID=83006be1fff34ea7949b0cbd0cb2483a 2>/dev/null | grep -q .; do
                i=$((i + 1)); [ $i -lt 1000 ] || { echo "entries of $level never became readable" >&2; exit 4; }; sleep 0.01
            done
        done
        journalctl -o json RELINK_TEST_RUN="$TAG-info" > "$OUT/info.json"
        journalctl -o json RELINK_TEST_RUN="$TAG-debug" > "$OUT/debug.json"
        """#

    private typealias Entry = [String: Any]

    private static func entries(_ path: String) throws -> [Entry] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? Entry)
        }
    }

    @Test func probeEntriesArriveWithPriorityCodeLocationMessageIDsAndRelinkFields() async throws {
        try await TestPaths.withTemporaryDirectory { directory in
            let tag = "run-\(UUID().uuidString.prefix(8))"
            let result = try await TestPaths.run(
                TestPaths.packageRoot + "/bench/private-journald.sh", ["/bin/sh", "-c", Self.script],
                environment: ["JOURNALD": TestPaths.journald, "PROBE": TestPaths.probe, "TAG": tag, "OUT": directory],
                timeout: .seconds(60))
            try #require(result.status == 0, "namespace script failed: \(result.stderr)")
            let probeOut = try String(contentsOfFile: directory + "/probe.out", encoding: .utf8)
            #expect(probeOut == "destination=journal\ndestination=journal\n", "auto must pick journald here")

            let info = try Self.entries(directory + "/info.json")
            #expect(info.map { $0["RELINK_EVENT"] as? String } == ["started", "restored", "connect-failed", "reconnect-gave-up"])
            #expect(info.map { $0["PRIORITY"] as? String } == ["6", "5", "4", "3"])
            #expect(info.map { $0["MESSAGE_ID"] as? String } == [
                RelinkMessageID.started.id, RelinkMessageID.restored.id,
                RelinkMessageID.connectFailed.id, RelinkMessageID.reconnectGaveUp.id,
            ])
            for entry in info {
                #expect(entry["SYSLOG_IDENTIFIER"] as? String == "relink-systemd-probe")
                #expect((entry["CODE_FILE"] as? String)?.hasSuffix("JournalScenario.swift") == true)
                #expect(Int(entry["CODE_LINE"] as? String ?? "") ?? 0 > 0)
                #expect((entry["CODE_FUNC"] as? String)?.hasPrefix("run(") == true)
                #expect(entry["_TRANSPORT"] as? String == "journal")
            }

            let restored = try #require(info.first { $0["RELINK_EVENT"] as? String == "restored" })
            #expect(restored["RELINK_RESTORE_ID"] as? String == "probe-restore-1")
            #expect(restored["RELINK_PERIPHERAL"] as? String == "AA:BB:CC:DD:EE:01")
            #expect(restored["RELINK_STRATEGY"] as? String == "backoff")

            let failed = try #require(info.first { $0["RELINK_EVENT"] as? String == "connect-failed" })
            #expect(failed["MESSAGE"] as? String == "connect failed\nsecond line of the message")
            #expect(failed["RELINK_ATTEMPT"] as? String == "3")
            #expect(failed["RELINK_ERROR"] as? String == "org.bluez.Error.Failed: le-connection-abort-by-local")
            // Invalid metadata keys are sanitised, not dropped.
            #expect(failed["PERIPHERAL_NAME"] as? String == "strap one")
            #expect(failed["PRIVATE"] as? String == "underscore")
            #expect(failed["FIELD_9LIVES"] as? String == "digit")
            #expect(failed["META_MESSAGE"] as? String == "collides with MESSAGE")

            // The level is configurable: at debug the debug entry is there too, at priority 7.
            let debug = try Self.entries(directory + "/debug.json")
            #expect(debug.count == info.count + 1)
            let detail = try #require(debug.first { ($0["MESSAGE"] as? String)?.hasPrefix("debug detail") == true })
            #expect(detail["PRIORITY"] as? String == "7")
            #expect(!info.contains { ($0["MESSAGE"] as? String)?.hasPrefix("debug detail") == true })
        }
    }
}
