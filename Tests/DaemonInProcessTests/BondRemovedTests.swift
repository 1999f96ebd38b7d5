import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// A bond removed behind relinkd's back (`bluetoothctl remove`, issue 24):
/// bluetoothd drops the keys and the device object; relinkd reconnects as
/// for any lost link, tells the identifier once (`bond-removed`) when the
/// peripheral shows up again unpaired, and pairs again on demand only when
/// an operation needs it, once; a bluetoothd restart (which removes every
/// object and re-adds bonded ones paired) is no removal.
@Suite("Daemon in-process: bond removed outside relinkd")
struct BondRemovedTests {
    typealias T = RestoreCycleTests

    static func count(_ d: InProcessDaemon, _ kind: String) async throws -> Int {
        try await d.events(T.id).filter { $0.kind == kind }.count
    }

    /// Notifications armed on the band's measurement (bluetoothd's `Notifying`).
    static func notifying(_ fake: FakeBlueZ) async -> Bool {
        await fake.mirror.characteristic(device: fake.devicePath(T.band), service: T.heartRate.description,
                                         characteristic: T.measurement.description)?.notifying == true
    }

    @Test func aRemovedBondIsOneEventThenTheLinkIsBackAndPairedOnDemandOnce() async throws {
        let fake = await PairingOnDemandTests.band(encryptedMeasurement: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("paired on demand") { await fake.isBonded(T.band) }
        #expect(try await Self.count(d, "bond-removed") == 0)

        await fake.removeBond(T.band)
        try await eventually("bond-removed stored") { try await Self.count(d, "bond-removed") == 1 }
        let removed = try await d.events(T.id).first { $0.kind == "bond-removed" }
        if case .bondRemoved(let p)? = removed?.payload {
            #expect(p == (await d.daemon.peripheralID(for: T.band)))
        } else { Issue.record("no bond-removed payload: \(String(describing: removed))") }
        try await eventually("reconnected and paired again for the encrypted subscription") {
            guard await d.state(T.id, T.band) == "connected" else { return false }
            guard await fake.isBonded(T.band) else { return false }
            return await Self.notifying(fake)
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 90, 1])
        try await eventually("values flow again") { T.values(try await d.events(T.id)).contains([0, 90, 1]) }
        #expect(await PairingOnDemandTests.pairCalls(fake) == 2, "one pairing per bond, no loop")
        #expect(try await Self.count(d, "bond-removed") == 1, "told once")
        await d.stop()
    }

    @Test func aBluetoothdRestartKeepsTheBondAndIsNoRemoval() async throws {
        let fake = await PairingOnDemandTests.band(encryptedMeasurement: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("paired on demand") { await fake.isBonded(T.band) }
        await fake.restartBluetoothd()
        try await eventually("the link back and armed") {
            guard await d.state(T.id, T.band) == "connected" else { return false }
            return await Self.notifying(fake)
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 91, 1])
        try await eventually("values flow again") { T.values(try await d.events(T.id)).contains([0, 91, 1]) }
        #expect(try await Self.count(d, "bond-removed") == 0)
        #expect(await PairingOnDemandTests.pairCalls(fake) == 1, "the kept bond serves")
        await d.stop()
    }
}
