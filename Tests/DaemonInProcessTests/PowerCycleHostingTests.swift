import BlueZ
import BlueZFake
import DBus
import Foundation
@testable import RelinkDaemon
import RelinkModel
import Testing

/// The peripheral role across a power cycle of relinkd's adapter (issue 24,
/// a bonded central among the restored subscribers): bluetoothd 5.66 keeps
/// the application registered and a bonded central's CCCD with it, so
/// relinkd registers only the advertisement again. Registering the
/// application anew would remove the CCCD (the fake does as bluetoothd,
/// `remove_device_ccc`; its remote central keeps its CCCD across the link's
/// loss, as a bonded central's is kept).
@Suite("Daemon in-process: the peripheral role across a power cycle")
struct PowerCycleHostingTests {
    typealias P = PeripheralRoleTests

    @Test func aPowerCycleKeepsTheApplicationRegisteredAndTheSubscribedCentralGetsUpdatesWithoutSubscribingAgain() async throws {
        let fake = FakeBlueZ()
        let d = try await P.published(fake)
        defer { Task { await d.stop() } }
        #expect(await fake.remoteSubscribe(P.root, P.level) == .done)
        try await eventually("subscribed event") { try await P.pmEvents(d).contains(.subscribed(central: "unknown", characteristic: P.level)) }
        let (applications, calls) = (await fake.applicationRegistrationCount, await fake.hostingCallCount)

        await fake.powerCycleAdapter()
        try await eventually("relinkd handled the power-on") { await fake.hostingCallCount > calls }
        #expect(await fake.isAdvertising(P.root))
        #expect(await fake.applicationRegistrationCount == applications, "the services stayed registered")
        _ = try await P.call(d, .updateValue(P.level, [8]))
        try await eventually("the central got the update") { await fake.received(P.root, P.level) == [[8]] }
    }

    @Test func afterABluetoothdRestartTheApplicationIsRegisteredAnew() async throws {
        let fake = FakeBlueZ()
        let d = try await P.published(fake)
        defer { Task { await d.stop() } }
        let applications = await fake.applicationRegistrationCount
        await fake.restartBluetoothd()
        try await eventually("registered with the new bluetoothd") { await fake.applicationRegistrationCount > applications }
        #expect(await fake.isApplicationRegistered(P.root))
    }
}
