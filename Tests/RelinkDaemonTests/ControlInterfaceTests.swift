import DBus
import Foundation
import Testing

/// Issue 19: `org.relink.Control1` is a test interface: off unless
/// `RELINK_CONTROL_INTERFACE=1` is in relinkd's environment, and then for
/// root only (docs/api/Control1.md).
@Suite(.serialized, .timeLimit(.minutes(2))) struct ControlInterfaceTests {
    @Test func controlOneIsNotExportedUnlessAskedFor() async throws {
        try await Harness.with { h in
            #expect(h.stopRelinkd() == 0)
            try h.launchRelinkd(environment: ["RELINK_CONTROL_INTERFACE": "0"])
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            // Up: the client API answers.
            try await eventually(timeout: .seconds(20), "relinkd up") {
                (try? await client.call(APIClient.manager, "org.freedesktop.DBus.Properties", "Get",
                                         [.string("org.relink.Manager1"), .string("Ready")])) != nil
            }
            do {
                _ = try await client.call(try ObjectPath("/org/relink/control"), "org.relink.Control1", "Status")
                Issue.record("Control1 answered although it was not asked for")
            } catch let error as DBusError {
                #expect(error.name == .unknownObject || error.name == .unknownMethod || error.name == .unknownInterface, "\(error)")
            }
        }
    }

    @Test func controlOneAnswersRootWhenAskedFor() async throws {
        try await Harness.with { h in
            // Harness starts relinkd with the test interface on (as every bench test does).
            let status = try await h.control.status()
            #expect(status["ready"] as? Bool == true)
        }
    }
}
