import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// What real bluetoothd 5.66 does and the Python mock did not
/// (issue 20, docs/real-bluez.md), played by the fake, in-process.
@Suite("Daemon in-process: real bluetoothd's behaviours")
struct RealBlueZBehaviourTests {
    typealias T = RestoreCycleTests

    /// Finding 1: a drop and an immediate reconnect to a dying controller
    /// arrive as one `PropertiesChanged(ServicesResolved=false,
    /// Connected=true)`; then bluetoothd removes the Device1 relinkd holds
    /// as connected. relinkd must not go on claiming a link it lacks.
    @Test func aMergedDropAndReconnectIsNotTakenForALiveLink() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        await fake.mergedDropAndReconnect(T.band)
        try await eventually("the drop reported to the client") { try await d.events(T.id).map(\.kind).contains("disconnected") }
        // The drop is reported at the merged signal; the half-open check tears the link down after it.
        try await eventually("the half-open link torn down") { await fake.calls.contains(.disconnect(T.band.string)) }
        try await eventually("a real link again") { try await d.events(T.id).filter { $0.kind == "connected" }.count == 2 }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 99, 1])
        try await eventually("values flow on the new link") { T.values(try await d.events(T.id)).contains([0, 99, 1]) }
        await d.stop()
    }

    @Test func aDevice1RemovedWhileConnectedIsALostLink() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        await fake.removeDeviceObject(T.band)
        try await eventually("the drop reported to the client") { try await d.events(T.id).map(\.kind).contains("disconnected") }
        // The band is still in range: a scan finds it as a new Device1 and relinkd links it again.
        try await eventually("linked again through a fresh Device1") {
            try await d.events(T.id).filter { $0.kind == "connected" }.count == 2
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 95, 1])
        try await eventually("values flow on the new link") { T.values(try await d.events(T.id)).contains([0, 95, 1]) }
        await d.stop()
    }

    /// Finding 3: `ServicesResolved=true` before the characteristic objects.
    /// Notifications must be armed when the characteristic appears, not
    /// when the 3 s grace timer fires: the daemon's clock is a manual one
    /// that never moves, so the grace timer cannot be what arms them.
    @Test func notificationsAreArmedWhenTheCharacteristicAppears() async throws {
        let fake = FakeBlueZ()
        await fake.setQuirk(servicesResolvedBeforeCharacteristics: true)
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(),
                                          clock: .manual())
        try await d.submit(.register(T.id, uid: 0))
        try await d.submit(.connect(T.id, T.band, try T.options()))
        try await d.submit(.subscribe(T.id, T.band, T.key))
        try await eventually("connected") { await d.state(T.id, T.band) == "connected" }
        await fake.addPendingCharacteristics(T.band)
        try await eventually("armed with the clock standing still") {
            await fake.calls.contains { if case .startNotify = $0 { true } else { false } }
        }
        await d.stop()
    }

    /// Finding 6: btvirt (and some real controllers) report no RSSI (0x7f),
    /// and the kernel drops such reports whenever the discovery filter has
    /// an RSSI threshold. relinkd must find such a peripheral by a scan.
    @Test func aPeripheralReportingNoRSSIIsFoundByAScan() async throws {
        let fake = FakeBlueZ()
        var band = T.bandPeripheral()
        band.rssi = FakePeripheral.rssiNotAvailable
        await fake.add(band)  // not known to bluetoothd: only a scan finds it
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: 0))
        try await d.submit(.connect(T.id, T.band, try T.options([.scan])))
        try await eventually("found by the scan and connected") { await d.state(T.id, T.band) == "connected" }
        await d.stop()
    }

    /// Finding 6: the filter relinkd sets has no RSSI threshold unless an
    /// intent asked for a limit, and asks for every report (`DuplicateData`)
    /// so that a known peripheral coming back in range is seen.
    @Test func theDiscoveryFilterHasNoRSSIThresholdUnlessAnIntentAsks() throws {
        let plain = Daemon.bluezFilter(DiscoveryFilter(services: [T.heartRate]))
        #expect(plain.minimumRSSI == nil)
        #expect(plain.duplicateData)
        guard case .dictionary(_, _, let entries) = plain.dbusValue else {
            Issue.record("not a dictionary: \(plain.dbusValue)")
            return
        }
        #expect(!entries.contains { $0.key == .string("RSSI") })
        #expect(entries.contains(.init(.string("DuplicateData"), .variant(.boolean(true)))))
        let limited = Daemon.bluezFilter(DiscoveryFilter(minimumRSSI: -70))
        #expect(limited.minimumRSSI == -70)
    }

    /// Finding 4: the peripheral's GATT application restarts on a live link;
    /// bluetoothd re-adds its services under new paths. relinkd must arm
    /// the new characteristic as it appears (the clock stands still, so no
    /// timer does it), and values must flow again.
    @Test func gattObjectsReAddedUnderNewPathsAreArmedAgain() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(),
                                          clock: .manual())
        try await T.linked(d)
        let armedBefore = await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count
        await fake.restartGattApplication(T.band)
        try await eventually("the new characteristic armed with the clock standing still") {
            await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count > armedBefore
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 90, 1])
        try await eventually("a value from the new characteristic") { T.values(try await d.events(T.id)).contains([0, 90, 1]) }
        #expect(await fake.isConnected(T.band), "the link was never dropped for it")
        await d.stop()
    }
}

extension RealBlueZBehaviourTests {
    /// Seen on real bluetoothd (docs/real-bluez.md): after a SIGTERM restart
    /// relinkd stayed `waiting-for-adapter`: the exiting bluetoothd powered
    /// the adapter off, the new one brought it up already powered.
    @Test func aGracefulBluetoothdRestartDoesNotLeaveTheLinkWaitingForTheAdapter() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        await fake.restartBluetoothdGracefully()
        try await eventually("linked again after bluetoothd's SIGTERM restart") {
            try await d.events(T.id).filter { $0.kind == "connected" }.count >= 2
        }
        try await eventually("notifications armed again") {
            await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count >= 2
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 77, 1])
        try await eventually("values flow again") { T.values(try await d.events(T.id)).contains([0, 77, 1]) }
        await d.stop()
    }
}

extension RealBlueZBehaviourTests {
    /// Seen by the restart-survival suite on real bluetoothd: after a
    /// SIGKILL restart of bluetoothd the kernel kept the link; relinkd's
    /// `Connect` (known identifier) was answered only after the new
    /// bluetoothd had dropped the old link and made a new one. The drop
    /// ended relinkd's step, its next step (already connected) found the new
    /// link up and took relinkd's own link for another program's (route
    /// `alreadyConnected`), so forgetting the identifier left the link up,
    /// for nobody.
    @Test func aLinkMadeByRelinkdsOwnConnectStaysItsOwnAfterABluetoothdCrash() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        await fake.restartBluetoothdKeepingLinks()
        try await eventually("relinkd's Connect waiting for the kept link") { await fake.holdsConnect(T.band) }
        await fake.dropKeptLinks()
        try await eventually("linked again") { await d.state(T.id, T.band) == "connected" }
        try await eventually("notifications armed again") {
            await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count >= 2
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 66, 1])
        try await eventually("values flow again") { T.values(try await d.events(T.id)).contains([0, 66, 1]) }
        let connected = try await d.events(T.id).compactMap { event -> ConnectRoute? in
            if case .connected(_, _, let route, _)? = event.payload { route } else { nil }
        }
        #expect(connected.last == .knownIdentifier, "the link is relinkd's own: \(connected)")
        try await d.submit(.cancel(T.id, T.band))
        try await eventually("the link ends with the intent") { await !fake.isConnected(T.band) }
        await d.stop()
    }
}
