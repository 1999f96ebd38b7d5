import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// The per-intent bond kept in the store (v11) lets a restarted relinkd see
/// a bond removed while it was not running: one `bond-removed` event when
/// the device is there unpaired (then pairing on demand, as for any
/// removed bond).
@Suite("Daemon in-process: a bond removed while relinkd was away")
struct BondRemovedWhileAwayTests {
    typealias T = RestoreCycleTests

    @Test func aStoredBondThatBluetoothdNoLongerHasIsReportedOnceAtStartUp() async throws {
        let fake = await PairingOnDemandTests.band(encryptedMeasurement: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await T.linked(first)
        try await eventually("paired on demand") { await fake.isBonded(T.band) }
        let peripheral = try #require(await first.daemon.peripheralID(for: T.band))
        let intent = ConnectionIntentID(identifier: T.id, peripheral: peripheral)
        try await eventually("the intent stored as bonded") { await first.daemon.known.intentBonds[intent]?.bonded == true }
        await first.stop()
        await fake.removeBond(T.band)            // bluetoothctl remove while relinkd is away
        await fake.add(T.bandPeripheral(), known: true)   // seen again, unpaired
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("bond-removed told") { try await second.events(T.id).contains { $0.kind == "bond-removed" } }
        // Then, as for any removed bond: paired again on demand, once.
        try await eventually("paired again for the encrypted subscription") {
            guard await PairingOnDemandTests.pairCalls(fake) == 2 else { return false }
            return await second.daemon.known.intentBonds[intent]?.bonded == true
        }
        #expect(try await second.events(T.id).filter { $0.kind == "bond-removed" }.count == 1)
        await second.stop()
    }
}
