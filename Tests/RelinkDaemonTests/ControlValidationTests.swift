import DBus
import Foundation
import Testing

/// The control path refuses malformed calls with typed `org.relink.Error.*`
/// errors, stays up, and changes nothing for a refused call.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ControlValidationTests {
    func expectError(_ name: String, _ h: Harness, _ method: String, _ arguments: [DBusValue],
                     sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await h.control.call(method, arguments)
            Issue.record("\(method) was accepted", sourceLocation: sourceLocation)
        } catch let error as DBusError {
            #expect(error.name.rawValue == name, "\(method): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(method): \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func malformedCallsGetTypedErrors() async throws {
        try await Harness.with { h in
            let invalid = "org.relink.Error.InvalidArguments"
            await expectError(invalid, h, "Register", [.string("")])
            await expectError(invalid, h, "Register", [.string("has space")])
            await expectError(invalid, h, "Register", [.string(String(repeating: "a", count: 300))])
            await expectError("org.relink.Error.UnknownIdentifier", h, "Connect", [
                .string("nobody"), .string(Harness.lockAddress), .dictionary(key: .string, value: .variant, []),
            ])
            try await h.control.register(Harness.id)
            await expectError(invalid, h, "Connect", [.string(Harness.id), .string("00:11:22"), .dictionary(key: .string, value: .variant, [])])
            await expectError(invalid, h, "Connect", [.string(Harness.id), .string(Harness.lockAddress),
                                                      .dictionary(key: .string, value: .variant, [.init(.string("bogus"), .variant(.boolean(true)))])])
            await expectError(invalid, h, "Connect", [.string(Harness.id), .string(Harness.lockAddress),
                                                      .dictionary(key: .string, value: .variant, [.init(.string("timeout_s"), .variant(.string("soon")))])])
            await expectError(invalid, h, "Connect", [.string(Harness.id), .string(Harness.lockAddress),
                                                      .dictionary(key: .string, value: .variant, [.init(.string("timeout_s"), .variant(.double(-1)))])])
            await expectError(invalid, h, "Connect", [.string(Harness.id), .string(Harness.lockAddress),
                                                      .dictionary(key: .string, value: .variant, [.init(.string("pending_until_cancelled"), .variant(.boolean(false)))])])
            await expectError("org.relink.Error.UnknownPeripheral", h, "Subscribe", [
                .string(Harness.id), .string("AA:BB:CC:DD:EE:FF"), .string(Harness.lockService), .string(Harness.lockState),
            ])
            await expectError(invalid, h, "Subscribe", [.string(Harness.id), .string(Harness.lockAddress), .string("not-a-uuid"), .string(Harness.lockState)])
            await expectError(invalid, h, "Scan", [.string(Harness.id), .array(.string, [.string("xyz")]), .boolean(false)])
            await expectError("org.relink.Error.UnknownPeripheral", h, "Cancel", [.string(Harness.id), .string(Harness.lockAddress)])
            // A wrong signature is refused by the D-Bus binding before relinkd sees it.
            await expectError("org.freedesktop.DBus.Error.InvalidArgs", h, "Events", [.string(Harness.id), .string("0")])
            await expectError(invalid, h, "Events", [.string(Harness.id), .uint64(.max)])
            await expectError("org.freedesktop.DBus.Error.InvalidArgs", h, "Status", [.string("extra")])
            // Nothing was changed by the refused calls, and relinkd is still up.
            let status = try await h.control.status()
            let ids = status["identifiers"] as? [[String: Any]] ?? []
            #expect(ids.map { $0["id"] as? String } == [Harness.id])
            #expect((ids.first?["connections"] as? [Any])?.isEmpty == true)
            #expect(try await h.control.events(Harness.id).isEmpty)
            #expect(h.relinkd?.process.isRunning == true)
        }
    }

    @Test func acknowledgedEventsAreGoneAndAcknowledgingTheFutureIsRefused() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([1, 2])
            let events = try await h.control.events(Harness.id)
            let last = try #require(events.last?.seq)
            await expectError("org.relink.Error.InvalidArguments", h, "Ack", [.string(Harness.id), .uint64(last + 100)])
            #expect(try await h.control.events(Harness.id) == events, "a refused Ack changed the outbox")
            try await h.control.call("Ack", [.string(Harness.id), .uint64(last - 1)])
            #expect(try await h.control.events(Harness.id).map(\.seq) == [last])
            #expect(try await h.control.events(Harness.id, after: last).isEmpty)
            // Acknowledged events stay gone after a restart.
            h.killRelinkd()
            try await h.startRelinkd()
            #expect(try await h.control.events(Harness.id).first?.seq == last)
        }
    }

    @Test func connectTwiceIsRefusedAndCancelStopsTheIntent() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            await expectError("org.relink.Error.AlreadyExists", h, "Connect", [
                .string(Harness.id), .string(Harness.lockAddress), .dictionary(key: .string, value: .variant, []),
            ])
            try await h.control.call("Cancel", [.string(Harness.id), .string(Harness.lockAddress)])
            try await h.waitForEvents("disconnected", count: 1)
            #expect(try await h.control.connectionState(Harness.id) == nil)
            // A restart does not bring a cancelled intent back.
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitUntilReady()
            #expect(try await h.control.connectionState(Harness.id) == nil)
            #expect(try await h.events("restored").isEmpty)
        }
    }
}
