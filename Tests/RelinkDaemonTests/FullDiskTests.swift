import BenchSupport
import DBus
import Foundation
import Testing

/// Issue 21, item 6, as it was found: the state on a small tmpfs that fills
/// while the band streams at 20 Hz. Every value is stored or counted as
/// dropped (`dropped_events`, `dropped_range`), none in silence, and the
/// journal is not flooded. Needs CAP_SYS_ADMIN to mount (as on the bench).
@Suite("relinkd on a full disk", .enabled(if: SmallFilesystem.mayMount, "needs CAP_SYS_ADMIN to mount a tmpfs"))
struct FullDiskTests {
    /// Fills the file system at `directory` with one file until it is full.
    static func fill(_ path: String) {
        guard let handle = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { return }
        defer { try? handle.close() }
        let block = Data(repeating: 0xA5, count: 4096)
        while (try? handle.write(contentsOf: block)) != nil {}
    }

    @Test func everyValueIsStoredOrCountedAsDroppedAndTheJournalIsNotFlooded() async throws {
        try await Harness.with { h in
            // The state moves onto a 2 MiB tmpfs (200 KiB, as in the report, is full before the stream starts).
            #expect(h.stopRelinkd() == 0)
            let state = h.directory + "/state", saved = h.directory + "/saved"
            try FileManager.default.moveItem(atPath: state, toPath: saved)
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try #require(try SmallFilesystem.mount(size: "2m", at: state))
            defer { SmallFilesystem.unmount(state) }
            for file in try FileManager.default.contentsOfDirectory(atPath: saved) {
                try FileManager.default.copyItem(atPath: saved + "/" + file, toPath: state + "/" + file)
            }
            try await h.startRelinkd()
            try await h.streamBand()

            // The disk fills while values stream.
            let filler = state + "/filler"
            Self.fill(filler)
            try await eventually(timeout: .seconds(30), "the store refuses writes") {
                ((try await h.control.status()["store"] as? [String: Any])?["refusingWrites"] as? Bool) == true
            }
            try await eventually(timeout: .seconds(30), "40 values not stored") {
                ((try await h.control.status()["store"] as? [String: Any])?["unstoredEvents"] as? Int ?? 0) >= 40
            }
            // Room again while values stream: the store takes them and counts what it lost.
            try FileManager.default.removeItem(atPath: filler)
            try await eventually(timeout: .seconds(30), "the store takes writes again") {
                ((try await h.control.status()["store"] as? [String: Any])?["refusingWrites"] as? Bool) == false
            }
            try await h.waitUntilBandStopped()
            let unstored = try #require((try await h.control.status()["store"] as? [String: Any])?["unstoredEvents"] as? Int)

            // After a restart, what the store says: each counter stored or counted.
            #expect(h.stopRelinkd() == 0)
            try await h.startRelinkd()
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (_, restored, _) = try await client.register(Harness.bandID)
            guard case .uint64(let dropped)? = restored["dropped_events"],
                  case .structure(let range)? = restored["dropped_range"], range.count == 2,
                  case .uint64(let low) = range[0], case .uint64(let high) = range[1] else {
                Issue.record("no dropped_events/dropped_range in \(restored)")
                return
            }
            #expect(Int(dropped) == unstored, "the store counted every value it could not store")
            let counters = try await h.bandCounters()
            guard let first = counters.first, let last = counters.last else { Issue.record("no values"); return }
            #expect(UInt64(counters.count) + dropped == UInt64(last - first + 1), "each counter stored once or counted as dropped")
            let values = try await h.control.events(Harness.bandID).filter { $0.kind == "value-notified" }
            for (a, b) in zip(values, values.dropFirst()) where b.seq != a.seq + 1 {
                #expect(low <= a.seq + 1 && b.seq - 1 <= high, "a gap \(a.seq)..\(b.seq) outside the dropped range \(low)...\(high)")
            }
            // The journal: a bounded number of lines about it, not one per value.
            let log = (try? String(contentsOfFile: h.directory + "/relinkd-2.log", encoding: .utf8)) ?? ""
            let lines = log.split(separator: "\n").filter { $0.contains("events-not-stored") || $0.contains("not stored") }
            #expect(!lines.isEmpty && lines.count <= 10, "\(lines.count) lines: \(lines.prefix(12))")
        }
    }
}

