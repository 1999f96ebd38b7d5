import Foundation
@testable import RelinkStore
import Testing

/// One store per state directory: a second opener (another relinkd) is
/// refused while the first holds the directory's lock, and named.
@Suite("State directory lock")
struct StateDirectoryLockTests {
    @Test("a second open of a held state directory fails with exit 75 naming the holder's PID; the first store is unharmed")
    func secondOpenIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try await first.apply([.putIdentifier(Fixtures.identifier("lockA"))])

        let logs = LogCapture()
        #expect {
            _ = try RelinkStore(directory: directory.path, logger: logs.logger)
        } throws: { error in
            guard let error = error as? StoreOpenError else { return false }
            let text = "\(error)"
            return error.exitStatus == 75 && text.contains(directory.path) && text.contains("PID \(getpid())")
        }
        #expect(logs.loud.map(\.level) == [.critical])
        #expect(try await first.loadState().identifiers.map(\.record.id.rawValue) == ["lockA"])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/quarantine"))

        // Released by close: the next open succeeds and finds the state.
        try first.close()
        let second = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        #expect(try await second.loadState().identifiers.map(\.record.id.rawValue) == ["lockA"])
        try second.close()
    }

    @Test("a failed open releases the lock")
    func failedOpenReleases() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try BadStateTests.garbage.write(to: URL(fileURLWithPath: directory.path + "/" + RelinkStore.databaseFileName))
        #expect(throws: StoreOpenError.self) { _ = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger) }
        try FileManager.default.removeItem(atPath: directory.path + "/" + RelinkStore.databaseFileName)
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        try store.close()
    }
}
