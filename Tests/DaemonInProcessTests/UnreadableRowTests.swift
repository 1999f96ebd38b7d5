import BlueZFake
import Foundation
import GRDB
@testable import RelinkDaemon
import RelinkModel
import RelinkStore
import Restoration
import Testing

/// Issue 19: a stored row that no longer decodes is never dropped silently.
/// relinkd reports it (journal, `Status`) and keeps it in the store; the
/// other identifiers restore as usual.
@Suite("Daemon in-process: unreadable rows")
struct UnreadableRowTests {
    typealias T = RestoreCycleTests

    @Test func aRowThatNoLongerDecodesIsReportedAndKeptWhileTheRestRestores() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await T.linked(first)
        let other = try RestoreIdentifier("other")
        try await first.submit(.register(other, uid: 0))
        await first.stop()

        // Behind the schema's back, as an outside edit (or a bug) would.
        let path = directory + "/" + RelinkStore.databaseFileName
        var config = Configuration()
        config.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: path, configuration: config)
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE connection_intent SET state = 'flying' WHERE identifier = 'band'")
        }
        try queue.close()

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try await second.daemon.statusJSON().utf8)) as? [String: Any])
        let rows = status["unreadableRows"] as? [[String: Any]] ?? []
        #expect(rows.contains { $0["table"] as? String == "connection_intent" && $0["identifier"] as? String == "band" }, "\(status)")
        #expect(await second.state(T.id, T.band) == nil, "the unreadable intent is not resumed")
        let identifiers = (status["identifiers"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(identifiers.contains("other") && identifiers.contains("band"), "the identifiers themselves restore: \(identifiers)")
        await second.stop()

        let check = try DatabaseQueue(path: path)
        let kept = try await check.read { try String.fetchOne($0, sql: "SELECT state FROM connection_intent WHERE identifier = 'band'") }
        try check.close()
        #expect(kept == "flying", "the row stays in the store as it was")
    }
}
