import DBus
import Foundation
import Testing

/// Each reconnect strategy carries a real connection on the bench: scan (the
/// device unknown to bluetoothd), known identifier (the stored device, after
/// a restart), already connected (a link made by another client).
@Suite(.serialized, .timeLimit(.minutes(2))) struct StrategyTests {
    static let lockPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")

    @Test func scanThenKnownIdentifierAfterRestart() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            #expect(try await h.events("connected").map(\.route) == ["scan"], "bluetoothd did not know the lock yet")
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            #expect(try await h.events("restored").map(\.route) == ["knownIdentifier"])
        }
    }

    @Test func alreadyConnectedAdoptsAnotherClientsLinkAndLeavesItUp() async throws {
        try await Harness.with { h in
            // Another client (this test) discovers and connects the lock.
            try await h.connectLockAsAnotherClient()
            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService],
                                        extra: [.init(.string("strategies"), .variant(.array(.string, [.string("already-connected")])))])
            try await h.waitForEvents("connected", count: 1)
            #expect(try await h.events("connected").map(\.route) == ["alreadyConnected"])
            try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
            try await h.waitUntilNotificationsFlow()
            // Cancelling an adopted link leaves it up for its owner.
            try await h.control.call("Cancel", [.string(Harness.id), .string(Harness.lockAddress)])
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await h.lockConnectedOnBlueZ(), "relinkd tore down a link it had only adopted")
        }
    }
}
