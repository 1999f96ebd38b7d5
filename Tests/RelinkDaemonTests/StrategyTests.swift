import BenchSupport
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

    /// A peripheral whose address changed (the client's stored address is
    /// one the lock no longer has): the known-identifier lookup finds
    /// nothing, and a scan finds it by the intent's match rule (its
    /// advertised name) at its new address, also when the rule was asked
    /// for before a restart. relinkd stores the new address, so after the
    /// next restart the known-identifier strategy connects it.
    @Test func aChangedAddressIsFoundByTheMatchRuleAndStored() async throws {
        let old = "00:00:00:00:00:99"
        try await Harness.with { h in
            let lock = try #require(h.bench.info.peripherals["lock"])
            try await h.control.register(Harness.id)
            // Without a match rule the old address is all there is to go by.
            try await h.control.connect(Harness.id, old, services: [Harness.lockService])
            // A whole round (known identifier, then scan) ends without a link.
            try await h.waitUntilBackingOff()
            #expect(try await h.events("connected").isEmpty, "a device at another address was taken without a match rule")
            try await h.control.call("Cancel", [.string(Harness.id), .string(old)])
            // The rule is stored with the intent: asked for while the lock
            // is away, it still finds the lock after a restart.
            try await h.bench.outOfRange("lock")
            try await h.control.connect(Harness.id, old, services: [Harness.lockService],
                                        extra: [.init(.string("match_name"), .variant(.string(lock.advName)))])
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 1)
            #expect(try await h.events("connected").map(\.route) == ["scan"])
            try await eventually(timeout: .seconds(5), "the new address stored") {
                ((try? await h.control.connections()) ?? []).map { $0["address"] as? String } == [lock.address]
            }
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            #expect(try await h.events("restored").map(\.route) == ["knownIdentifier"], "after a restart the stored address is the new one")
        }
    }

    /// The same, when the identifier's own scan had already met the lock at
    /// its new address as a peripheral of its own: that peripheral, which
    /// nothing else wants, gives its address up to the intent's, and the
    /// lock's values reach the intent's subscription.
    @Test func aChangedAddressAlreadyMetByAScanIsTakenOver() async throws {
        let old = "00:00:00:00:00:99"
        try await Harness.with { h in
            let lock = try #require(h.bench.info.peripherals["lock"])
            try await h.control.register(Harness.id)
            try await h.control.call("Scan", [.string(Harness.id), .array(.string, [.string(Harness.lockService)]), .boolean(false)])
            try await h.waitForEvents("discovered", count: 1)
            try await h.control.call("StopScan", [.string(Harness.id)])
            try await h.control.connect(Harness.id, old, services: [Harness.lockService],
                                        extra: [.init(.string("match_name"), .variant(.string(lock.advName)))])
            try await h.waitForEvents("connected", count: 1)
            try await eventually(timeout: .seconds(5), "the new address stored") {
                ((try? await h.control.connections()) ?? []).map { $0["address"] as? String } == [lock.address]
            }
            // The new address now names the intent's peripheral.
            try await h.control.subscribe(Harness.id, lock.address, Harness.lockService, Harness.lockState)
            try await h.waitUntilNotificationsFlow()
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("restored", count: 1)
            try await h.waitUntilNotificationsFlow()
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
            // What is tested is that no teardown comes: watch the link a while.
            try await observeQuietly(for: .milliseconds(500), "the adopted link stays up after Cancel") {
                (try? await h.lockConnectedOnBlueZ()) == true
            }
            #expect(try await h.lockConnectedOnBlueZ(), "relinkd tore down a link it had only adopted")
        }
    }
}
