import DBus
import Foundation
import Testing

/// Each reconnect strategy carries a real connection on the bench: scan (the
/// device unknown to bluetoothd), known identifier (the stored device, after
/// a restart), already connected (a link made by another client).
@Suite(.serialized, .timeLimit(.minutes(2))) struct StrategyTests {
    static let lockPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")

    func route(_ event: ControlClient.Event) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any],
              let inner = object[event.kind] as? [String: Any] else { return nil }
        return inner["route"] as? String
    }

    func lockConnected(_ h: Harness) async throws -> Bool {
        let reply = try await h.control.connection.call(
            destination: "org.bluez", path: Self.lockPath, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string("Connected")])
        guard case .variant(.boolean(let connected))? = reply.body.first else { return false }
        return connected
    }

    @Test func scanThenKnownIdentifierAfterRestart() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            #expect(try await h.events("connected").map(route) == ["scan"], "bluetoothd did not know the lock yet")
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            #expect(try await h.events("restored").map(route) == ["knownIdentifier"])
        }
    }

    @Test func alreadyConnectedAdoptsAnotherClientsLinkAndLeavesItUp() async throws {
        try await Harness.with { h in
            // Another client (this test) discovers and connects the lock.
            let bluez = h.control.connection
            let adapter = try ObjectPath("/org/bluez/hci0")
            _ = try await bluez.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", method: "StartDiscovery")
            try await eventually(timeout: .seconds(15), "a third-party Connect to succeed") {
                do {
                    _ = try await bluez.call(destination: "org.bluez", path: Self.lockPath, interface: "org.bluez.Device1", method: "Connect")
                    return true
                } catch { return false }
            }
            _ = try? await bluez.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", method: "StopDiscovery")
            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService],
                                        extra: [.init(.string("strategies"), .variant(.array(.string, [.string("already-connected")])))])
            try await h.waitForEvents("connected", count: 1)
            #expect(try await h.events("connected").map(route) == ["alreadyConnected"])
            try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
            try await h.waitUntilNotificationsFlow()
            // Cancelling an adopted link leaves it up for its owner.
            try await h.control.call("Cancel", [.string(Harness.id), .string(Harness.lockAddress)])
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await lockConnected(h), "relinkd tore down a link it had only adopted")
        }
    }
}
