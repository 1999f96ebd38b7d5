import Foundation
import Testing
@testable import Systemd

/// systemd/relink.catalog parses with the real journalctl (in a temp --root)
/// and explains exactly the ids of RelinkMessageID.
struct CatalogTests {
    static let catalog = TestPaths.packageRoot + "/systemd/relink.catalog"

    @Test func catalogHasAnEntryForEveryMessageIDAndNoOthers() throws {
        let text = try String(contentsOfFile: Self.catalog, encoding: .utf8)
        let ids = text.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("-- ") ? String(line.dropFirst(3)) : nil
        }
        #expect(Set(ids) == Set(RelinkMessageID.allCases.map(\.id)))
        #expect(ids.count == RelinkMessageID.allCases.count)
    }

    @Test func journalctlBuildsTheCatalogAndListsEveryID() async throws {
        try await TestPaths.withTemporaryDirectory { root in
            let catalogDirectory = root + "/usr/lib/systemd/catalog"
            try FileManager.default.createDirectory(atPath: catalogDirectory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.catalog, toPath: catalogDirectory + "/relink.catalog")

            let update = try await TestPaths.run("/usr/bin/journalctl", ["--root=\(root)", "--update-catalog"])
            #expect(update.status == 0)
            #expect(update.stderr.isEmpty, "journalctl complained: \(update.stderr)")

            let list = try await TestPaths.run("/usr/bin/journalctl", ["--root=\(root)", "--list-catalog"])
            #expect(list.status == 0)
            for id in RelinkMessageID.allCases {
                #expect(list.stdout.contains("\(id.id) relink: "), "\(id) not listed")
                let dump = try await TestPaths.run("/usr/bin/journalctl", ["--root=\(root)", "--dump-catalog", id.id])
                #expect(dump.stdout.contains("Subject: "), "\(id)")
                #expect(dump.stdout.contains("Defined-By: relink"), "\(id)")
                #expect(dump.stdout.contains("Support: "), "\(id)")
                // A paragraph an operator can act on, not just headers.
                let body = dump.stdout.components(separatedBy: "\n\n").dropFirst().joined()
                #expect(body.count > 150, "\(id): \(body)")
            }
        }
    }
}
