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

    @Test("unreadable database file: refused with exit 65 and left in place; or moved aside and started empty")
    func unreadableFile() async throws {
        let probe = try TortureProcess()
        let (directory, state) = try await stateWithDatabase()
        defer { directory.remove() }
        let file = state + "/" + RelinkStore.databaseFileName
        // The directory stays the probe user's; the file becomes unreadable to it.
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o000]
        if Self.probeUser != nil { attributes[.ownerAccountID] = 0 }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: file)

        let refused = try probe.run(["open", "--directory", state, "--policy", "refuse"], asUser: Self.probeUser)
        #expect(refused.status == 65)
        #expect(refused.output.contains("not readable and writable"), "\(refused.output)")
        #expect(FileManager.default.fileExists(atPath: file))

        let started = try probe.run(["open", "--directory", state, "--policy", "quarantineAndStartEmpty"], asUser: Self.probeUser)
        #expect(started.status == 0)
        #expect(started.output.contains("quarantined=1"), "\(started.output)")
        let moved = try FileManager.default.contentsOfDirectory(atPath: state + "/quarantine")
        #expect(moved.contains { $0.hasSuffix("-inaccessible.sqlite") }, "\(moved)")
    }
}
