import BenchSupport
import DBus
import Foundation
import Testing

/// relinkd SIGKILLed while a connection intent is in its scan strategy (the
/// lock never seen by bluetoothd, so known identifier has nothing to
/// connect, and out of range, so the scan finds nothing): after the restart
/// relinkd scans again by itself and connects when the lock comes in range.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ScanStrategyRestartTests {
    @Test func sigkillWhileScanningForAnUnknownDeviceScansAgainAndConnects() async throws {
        try await Harness.with { h in
            try await h.bench.outOfRange("lock")
            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService])
            try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
            try await eventually(timeout: .seconds(20), "relinkd to scan for the lock") {
                (try? await h.control.connectionState(Harness.id)) == "trying-scan"
            }
            h.killRelinkd()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(20), "relinkd to scan for the lock after the restart") {
                (try? await h.control.connectionState(Harness.id)) == "trying-scan"
            }
            #expect(try await h.events("connected").isEmpty)
            try await h.bench.inRange("lock")
            let back = ContinuousClock.now
            try await h.waitForEvents("connected", count: 1, timeout: .seconds(60))
            print("figure: lock in range to connected (scan strategy, after SIGKILL): \(ContinuousClock.now - back)")
            #expect(try await h.events("connected").map(route) == ["scan"], "bluetoothd did not know the lock: only a scan finds it")
            try await h.waitUntilNotificationsFlow()
            try await h.push([1, 2])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [1, 2])
            let values = try await h.notifiedValues()
            #expect(Set(values).count == values.count, "a value was delivered twice: \(values)")
        }
    }

    /// The lock was connected (bluetoothd knows it, relinkd stored its
    /// address), then went out of range and was evicted from bluetoothd
    /// (`Adapter1.RemoveDevice`): known identifier has nothing left to
    /// connect, so relinkd scans; SIGKILLed while scanning, it scans again
    /// after the restart and connects by scan when the lock is back.
    @Test func sigkillWhileScanningForAnEvictedDeviceScansAgainAndConnects() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([10])
            try await h.bench.outOfRange("lock")
            try await h.waitForEvents("disconnected", count: 1)
            let adapter = try ObjectPath("/org/bluez/hci0")
            let lock = try ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")
            _ = try await h.control.connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
                                                    method: "RemoveDevice", arguments: [.objectPath(lock)])
            try await eventually(timeout: .seconds(30), "relinkd to scan for the evicted lock") {
                (try? await h.control.connectionState(Harness.id)) == "trying-scan"
            }
            h.killRelinkd()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(30), "relinkd to scan for the evicted lock after the restart") {
                (try? await h.control.connectionState(Harness.id)) == "trying-scan"
            }
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            #expect(try await h.events("connected").map(route) == ["scan", "scan"], "the evicted lock is only found by a scan")
            try await h.waitUntilNotificationsFlow()
            try await h.push([11])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [10, 11])
            let values = try await h.notifiedValues()
            #expect(Set(values).count == values.count, "a value was delivered twice: \(values)")
        }
    }

    func route(_ event: ControlClient.Event) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any],
              let inner = object[event.kind] as? [String: Any] else { return nil }
        return inner["route"] as? String
    }
}
