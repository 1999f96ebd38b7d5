import BlueZ
import BlueZFake
import Foundation
@testable import RelinkDaemon
import RelinkModel
import Testing

/// bluetoothd 5.66 pairs by itself when a peripheral refuses an operation
/// for want of encryption (docs/real-bluez.md, difference 30): relinkd sees
/// no refusal, so its pairing on demand never runs; it must still mark the
/// newly bonded peripheral `Trusted`, as after its own pairing.
@Suite("Daemon in-process: a pairing bluetoothd made by itself")
struct BluetoothdPairingTests {
    typealias T = RestoreCycleTests
    typealias P = PairingOnDemandTests

    @Test func aPeripheralBluetoothdPairedByItselfIsTrusted() async throws {
        let fake = await P.band()
        await fake.pairByItselfWhenEncryptionIsRefused()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        #expect(try await P.read(d) == [2], "bluetoothd paired on the way and the read succeeded")
        #expect(await P.pairCalls(fake) == 0, "relinkd did not pair: nothing was refused")
        #expect(await fake.isBonded(T.band))
        try await eventually("relinkd trusts the peripheral bluetoothd bonded") { await fake.isTrusted(T.band) }
        await d.stop()  // its spawned work finished
        let trusts = await fake.calls.filter { if case .setTrusted(_, true) = $0 { true } else { false } }.count
        #expect(trusts == 1, "trusted once, not again for Bonded (which changes with Paired)")
    }
}
