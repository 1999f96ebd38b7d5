import BenchSupport
import Foundation
@testable import RelinkStore
import Testing

/// A real full disk: a 512 KiB tmpfs (room for the schema, its WAL and some events), mounted when the tests may mount
/// (root with CAP_SYS_ADMIN, as on the bench); skipped elsewhere, where
/// `BadStateTests.diskFull` covers the same outcome with `max_page_count`.
@Suite("Full disk on a small filesystem", .enabled(if: SmallFilesystem.mayMount, "needs CAP_SYS_ADMIN to mount a tmpfs"))
struct SmallFilesystemTests {
    @Test("writes fail with diskFull once the filesystem is full; every acknowledged write is kept")
    func realFullDisk() async throws {
        let directory = try TemporaryDirectory("relink-tmpfs")
        defer { directory.remove() }
        try #require(try SmallFilesystem.mount(size: "512k", at: directory.path))
        defer { SmallFilesystem.unmount(directory.path) }

        let store = try RelinkStore(directory: directory.path + "/state", logger: LogCapture().logger)
        let id = try Fixtures.id("filler")
        try await store.apply([.putIdentifier(Fixtures.identifier("filler", limit: 100_000))])
        var acknowledged: [Int64] = []
        var failure: StoreError?
        for n in 0..<100 {
            let draft = try OutboxEventDraft(identifier: id, kind: "blob", payload: Data(repeating: UInt8(n), count: 20_000), createdAt: Fixtures.now)
            do throws(StoreError) {
                acknowledged += try await store.apply([.appendEvent(draft)]).appendedSequences
            } catch {
                failure = error
                break
            }
        }
        #expect(failure == .diskFull)
        #expect(!acknowledged.isEmpty)
        #expect(try await store.events(for: id, limit: 1000).map(\.sequence) == acknowledged)
        #expect(try await store.integrityCheck() == ["ok"])
        try? store.close()

        // Reopened (without a checkpoint, which may itself need space): still all there.
        let reopened = try RelinkStore(directory: directory.path + "/state", policy: .refuse, logger: LogCapture().logger)
        #expect(try await reopened.events(for: id, limit: 1000).map(\.sequence) == acknowledged)
        try? reopened.close()
    }
}

