import Foundation
import Logging
import RelinkStore
import Testing

/// relinkd's command line: bad options and an unreachable bus end it with
/// an error exit and a message, never a crash.
@Suite struct CommandLineTests {
    func run(_ arguments: [String], asUser uid: UInt32? = nil) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
        try RelinkdProcess.runToEnd(arguments, asUser: uid)
    }

    @Test func badOptionsAreRefused() throws {
        let level = try run(["--log-level", "loud"])
        #expect(level.reason == .exit && level.status == 64)
        #expect(level.output.contains("--log-level"))
        let destination = try run(["--log-destination", "syslog"])
        #expect(destination.reason == .exit && destination.status == 64)
    }

    @Test func anUnreachableBusIsAnErrorExit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let result = try run(["--bus-address", "unix:path=\(directory)/nobody", "--state-directory", state, "--log-destination", "stderr"])
        #expect(result.reason == .exit && result.status != 0, "\(result.output)")
        // Checked before a new state is made (issue 38, item 5).
        #expect(!FileManager.default.fileExists(atPath: state), "relinkd made a state directory it could not use")
    }

    @Test func aBadAdapterNameIsAnErrorExit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try run(["--adapter", "../hci0", "--bus-address", "unix:path=\(directory)/nobody", "--state-directory", directory])
        #expect(result.reason == .exit && result.status == 64, "\(result.output)")
        #expect(result.output.contains("--adapter"))
    }

    /// A fresh temporary directory (mode 0755, so that another user may enter it).
    private func temporaryDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        return directory
    }

    @Test func aStoreThatCannotBeOpenedStopsStartUpWithPathCauseFixAndExit66() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let database = state + "/relink.sqlite"
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        let result = try run(["--bus-address", "unix:path=\(directory)/nobody", "--state-directory", state, "--log-destination", "stderr"])
        #expect(result.reason == .exit && result.status == 66, "\(result.output)")
        #expect(result.output.contains(database), "\(result.output)")
        #expect(result.output.contains("not a regular file"), "\(result.output)")
        #expect(!result.output.contains("unable to open database file (14)"), "\(result.output)")
        // Logged through relinkd's logger (its stderr line carries the journal fields).
        #expect(result.output.contains("RELINK_STORE_PATH"), "\(result.output)")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: database, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    /// Defect 4 of issue 21 as it was met: a non-root relinkd, an unreadable
    /// store, a bus it cannot reach; the store was moved aside and lost.
    @Test(.enabled(if: getuid() == 0, "needs root to run relinkd as another user"))
    func anUnreadableStoreStopsStartUpAndStaysInPlace() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let database = state + "/relink.sqlite"
        // A real store (relinkd makes none before it has a bus).
        try RelinkStore(directory: state, logger: Logger(label: "test")).close()
        let before = try #require(FileManager.default.contents(atPath: database))
        let nobody: UInt32 = 65534
        try FileManager.default.setAttributes([.ownerAccountID: nobody, .groupOwnerAccountID: nobody], ofItemAtPath: state)
        for item in try FileManager.default.contentsOfDirectory(atPath: state) where item != "relink.sqlite" {
            try FileManager.default.setAttributes([.ownerAccountID: nobody, .groupOwnerAccountID: nobody], ofItemAtPath: state + "/" + item)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: database)

        let result = try run(["--bus-address", "unix:path=\(directory)/nobody", "--state-directory", state, "--log-destination", "stderr"],
                             asUser: nobody)
        #expect(result.reason == .exit && result.status == 77, "\(result.output)")
        #expect(result.output.contains(database) && result.output.contains("Permission denied"), "\(result.output)")
        #expect(!result.output.contains("EMPTY"), "\(result.output)")
        #expect(FileManager.default.contents(atPath: database) == before)
        #expect(!FileManager.default.fileExists(atPath: state + "/quarantine"))
    }
}
