import Foundation
import Testing

@testable import DBus

/// `NO_AUTO_START`: a call that must not make the bus start its destination
/// (relinkd's calls to a bluetoothd that is down, issue 20 finding 7).
@Suite struct AutoStartTests {
    static let name = "org.relink.Activatable"

    /// A `.service` file for ``name`` whose launch only leaves `marker`
    /// and fails, as bluetoothd's activation does without systemd.
    static func markingService(marker: String) -> [String: String] {
        ["\(name).service": "[D-BUS Service]\nName=\(name)\nExec=/bin/sh -c 'touch \(marker); exit 1'\n"]
    }

    @Test func aCallWithoutAutoStartNeverActivatesItsDestination() async throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("relink-activated-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        try await withTestBus(serviceFiles: Self.markingService(marker: marker)) { bus in
            let client = try await bus.connect()
            do {
                _ = try await client.call(destination: Self.name, path: .root, interface: nil, method: "X", autoStart: false)
                Issue.record("no error")
            } catch let e as DBusError {
                #expect(e.name == .serviceUnknown || e.name == .nameHasNoOwner, "\(e)")
            }
            #expect(!FileManager.default.fileExists(atPath: marker), "the bus tried to start the service")

            // The same call allowed to auto-start: the bus does try (the set-up
            // is live). Its answer may wait for the launcher's exit to be
            // noticed, so only the launch is checked.
            await #expect(throws: DBusError.self) {
                try await client.call(destination: Self.name, path: .root, interface: nil, method: "X", timeout: .seconds(2))
            }
            #expect(FileManager.default.fileExists(atPath: marker))
        }
    }
}
