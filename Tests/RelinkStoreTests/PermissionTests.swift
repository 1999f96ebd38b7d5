import Foundation
@testable import RelinkStore
import Testing

/// Permission cases, run in the `relink-store-torture open` probe under an
/// unprivileged UID (root ignores file modes), asserting its exit status and
/// message as relinkd would report them.
@Suite("Unreadable and read-only state")
struct PermissionTests {
    static let nobody: UInt32 = 65534
    /// Run as `nobody` when the tests run as root; as ourselves otherwise.
    static var probeUser: UInt32? { getuid() == 0 ? nobody : nil }

    private func setOwner(_ path: String, mode: Int) throws {
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: mode]
        if let uid = Self.probeUser { attributes[.ownerAccountID] = uid; attributes[.groupOwnerAccountID] = uid }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: path)
    }

    /// A state directory holding a valid database, owned by the probe user.
    private func stateWithDatabase() async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory("relink-perm")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let state = directory.path + "/state"
        let store = try RelinkStore(directory: state, logger: LogCapture().logger)
        try await store.apply([.putIdentifier(Fixtures.identifier("kept"))])
        try store.close()
        for item in try FileManager.default.contentsOfDirectory(atPath: state) { try setOwner(state + "/" + item, mode: 0o600) }
        try setOwner(state, mode: 0o700)
        return (directory, state)
    }

    @Test("read-only state directory: exit 73, nothing moved")
    func readOnlyDirectory() async throws {
        let probe = try TortureProcess()
        let (directory, state) = try await stateWithDatabase()
        defer { directory.remove() }
        try setOwner(state, mode: 0o500)
        let result = try probe.run(["open", "--directory", state, "--policy", "quarantineAndStartEmpty"], asUser: Self.probeUser)
        #expect(result.status == 73)
        #expect(result.output.contains("state directory \(state) unusable"), "\(result.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).contains(RelinkStore.databaseFileName))
        #expect(!FileManager.default.fileExists(atPath: state + "/quarantine"))
    }

    @Test("state directory that cannot be created: exit 73")
    func uncreatableDirectory() async throws {
        let probe = try TortureProcess()
        let (directory, state) = try await stateWithDatabase()
        defer { directory.remove() }
        try setOwner(state, mode: 0o500)
        let result = try probe.run(["open", "--directory", state + "/sub"], asUser: Self.probeUser)
        #expect(result.status == 73)
        #expect(!FileManager.default.fileExists(atPath: state + "/sub"))
    }

    @Test("unreadable database file: start-up stops with exit 77 under either policy, naming the file and the fix; never moved aside")
    func unreadableFile() async throws {
        let probe = try TortureProcess()
        let (directory, state) = try await stateWithDatabase()
        defer { directory.remove() }
        let file = state + "/" + RelinkStore.databaseFileName
        let before = FileManager.default.contents(atPath: file)
        // The directory stays the probe user's; the file becomes unreadable to it.
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o000]
        if Self.probeUser != nil { attributes[.ownerAccountID] = 0 }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: file)

        for policy in StoreOpenPolicy.allCases {
            let result = try probe.run(["open", "--directory", state, "--policy", policy.rawValue], asUser: Self.probeUser)
            #expect(result.status == 77, "\(policy): \(result.output)")
            #expect(result.output.contains(file), "\(policy): \(result.output)")
            #expect(result.output.contains("Permission denied"), "\(policy): \(result.output)")
            #expect(result.output.contains("chown"), "the fix: \(result.output)")
        }
        #expect(FileManager.default.contents(atPath: file) == before, "the file stays, unchanged")
        #expect(!FileManager.default.fileExists(atPath: state + "/quarantine"), "nothing was moved aside")
    }

    @Test("unreadable write-ahead log: exit 77 naming the -wal file, not SQLite's bare 'unable to open database file'")
    func unreadableWAL() async throws {
        let probe = try TortureProcess()
        let (directory, state) = try await stateWithDatabase()
        defer { directory.remove() }
        let wal = state + "/" + RelinkStore.databaseFileName + "-wal"
        _ = FileManager.default.createFile(atPath: wal, contents: Data())
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o000]
        if Self.probeUser != nil { attributes[.ownerAccountID] = 0 }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: wal)

        let result = try probe.run(["open", "--directory", state, "--policy", "quarantineAndStartEmpty"], asUser: Self.probeUser)
        #expect(result.status == 77, "\(result.output)")
        #expect(result.output.contains(wal), "\(result.output)")
        #expect(!result.output.contains("unable to open database file (14)"), "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: state + "/" + RelinkStore.databaseFileName))
        #expect(!FileManager.default.fileExists(atPath: state + "/quarantine"))
    }
}
