import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// A peripheral that rotates its address (issue 24): the intent is made by
/// the resolvable private address the program saw; once paired, bluetoothd
/// shows the identity address on the same device (`Address`/`AddressType`
/// changed). relinkd follows the device there: the same peripheral, its
/// stored address the identity, found again through it after a link drop,
/// a relinkd restart and a bluetoothd restart (which loads the bond under
/// the identity, a new object) without any match rule.
@Suite("Daemon in-process: identity address of a rotating peripheral")
struct IdentityAddressTests {
    typealias T = RestoreCycleTests
    /// A resolvable private address (random, top bits 01).
    static let rpa = (try? BluetoothAddress(parsing: "5A:1B:2C:3D:4E:5F", kind: .random)) ?? { fatalError("valid") }()
    /// The band's identity address.
    static let identity = T.band

    static func world() async -> FakeBlueZ {
        let fake = FakeBlueZ()
        var band = T.bandPeripheral()
        band.address = rpa
        await fake.add(band, known: true)
        return fake
    }

    /// Connected and subscribed by the RPA, then the identity is shown.
    static func resolved(_ d: InProcessDaemon) async throws -> PeripheralID {
        try await d.submit(.register(T.id, uid: 0))
        try await d.submit(.connect(T.id, rpa, try T.options()))
        try await d.submit(.subscribe(T.id, rpa, T.key))
        try await eventually("the band connected by its RPA") { await d.state(T.id, rpa) == "connected" }
        let peripheral = try #require(await d.daemon.peripheralID(for: rpa))
        await d.fake.showIdentity(rpa, as: identity)
        try await eventually("relinkd follows the device to its identity") { await d.state(T.id, identity) == "connected" }
        return peripheral
    }

    /// Values flow: a value pushed before relinkd (re-)armed the session is
    /// lost (as on bluetoothd), so one is pushed at each poll, marked `n`,
    /// until one arrives.
    static func valueArrives(_ d: InProcessDaemon, _ n: UInt8, from address: BluetoothAddress = rpa) async throws {
        var count: UInt8 = 0
        try await eventually("a value marked \(n) stored") {
            count &+= 1
            await d.fake.push(address, service: T.heartRate, characteristic: T.measurement, [n, 60, count])
            return T.values(try await d.events(T.id)).contains { $0.first == n }
        }
    }

    @Test func anAddressChangeOnAKnownDeviceKeepsThePeripheralAndStoresTheIdentity() async throws {
        let fake = await Self.world()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        let peripheral = try await Self.resolved(first)
        #expect(await first.daemon.peripheralID(for: Self.identity) == peripheral, "the same peripheral")
        #expect(await first.daemon.peripheralID(for: Self.rpa) == nil, "the RPA no longer names it")
        let intent = ConnectionIntentID(identifier: T.id, peripheral: peripheral)
        try await eventually("the intent keeps that its address is an identity") {
            await first.daemon.known.intentBonds[intent]?.identityAddress == true
        }
        try await Self.valueArrives(first, 1)
        // The link drops and comes back: found again through the identity.
        await fake.dropLink(Self.rpa)
        try await eventually("the link is back through the identity") {
            try await first.events(T.id).contains {
                if case .connected(_, let address, _, _)? = $0.payload { address == Self.identity } else { false }
            }
        }
        try await Self.valueArrives(first, 2)
        await first.stop()
        // A restarted relinkd has the identity stored for the same peripheral.
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("restored at the identity") { await second.state(T.id, Self.identity) == "connected" }
        #expect(await second.daemon.peripheralID(for: Self.identity) == peripheral)
        #expect(await second.daemon.known.intentBonds[intent]?.identityAddress == true, "stored (v11) and loaded")
        try await Self.valueArrives(second, 3)
        await second.stop()
    }

    @Test func afterABluetoothdRestartTheDeviceAtTheIdentityIsTheSamePeripheral() async throws {
        let fake = await Self.world()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        let peripheral = try await Self.resolved(d)
        await fake.restartBluetoothdUnderIdentities()
        try await eventually("reconnected to the device at dev_<IDENTITY>") {
            guard await d.state(T.id, Self.identity) == "connected" else { return false }
            return await fake.mirror.device(fake.devicePath(Self.identity))?.connected == true
        }
        #expect(await d.daemon.peripheralID(for: Self.identity) == peripheral, "the same peripheral")
        try await Self.valueArrives(d, 9, from: Self.identity)
        await d.stop()
    }
}
