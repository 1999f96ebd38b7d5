import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// `Central1.Pair` (issue 24, first phase) against the fake bluetoothd:
/// the checks before BlueZ is asked, the pairing through relinkd's own
/// agent, `Trusted` after it, the typed errors, and the bond read back from
/// BlueZ (not stored by relinkd) after relinkd and bluetoothd restart.
@Suite("Daemon in-process: pairing")
struct PairingTests {
    typealias T = RestoreCycleTests
    static let caller = APICaller(name: ":1.9", uid: 0)

    static func pairCode(_ d: InProcessDaemon, _ ref: PeripheralRef = .address(T.band)) async -> RelinkErrorName? {
        do {
            try await d.daemon.pair(T.id, ref, from: caller)
            return nil
        } catch { return error.code }
    }

    /// Peripheral1's Paired, Bonded and Trusted as relinkd would publish them now.
    static func bondProperties(_ d: InProcessDaemon) async throws -> [Bool] {
        let peripheral = try #require(await d.daemon.peripheralID(for: T.band))
        let device = await d.fake.mirror.device(d.fake.devicePath(T.band))
        let values = await d.daemon.peripheralValues(peripheral, device: device)
        return [Peripheral1Property.paired, .bonded, .trusted].map { values[$0.rawValue] == .boolean(true) }
    }

    @Test func pairBondsThroughRelinkdsAgentThenTrustsAndTheBondOutlivesBothRestarts() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await T.linked(first)
        #expect(try await Self.bondProperties(first) == [false, false, false])

        #expect(await Self.pairCode(first) == nil)
        let (bonded, trusted) = (await fake.isBonded(T.band), await fake.isTrusted(T.band))
        #expect(bonded && trusted)
        let calls = await fake.calls.filter { if case .pair = $0 { true } else if case .setTrusted = $0 { true } else { false } }
        #expect(calls == [.pair(T.band.string, agent: Daemon.agentPath), .setTrusted(T.band.string, true)], "paired first, then trusted")
        #expect(try await Self.bondProperties(first) == [true, true, true])
        #expect(await Self.pairCode(first) == nil, "a second Pair of a bonded peripheral succeeds")

        // relinkd stops, bluetoothd restarts (the link is gone, the bond is kept).
        await first.stop()
        await fake.restartBluetoothd()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the link restored") { await second.state(T.id, T.band) == "connected" }
        #expect(try await Self.bondProperties(second) == [true, true, true], "read back from BlueZ after both restarts")
        #expect(await fake.calls.filter { if case .pair = $0 { true } else { false } }.count == 2, "no pairing again: only the two Pair calls above")
        await second.stop()
    }

    @Test func pairIsRefusedWithoutAnIntentOrALinkAndAFailedAuthenticationTrustsNothing() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(inRange: false), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: 0))
        #expect(await Self.pairCode(d) == .unknownPeripheral, "no peripheral known yet")
        try await d.submit(.connect(T.id, T.band, try T.options()))
        #expect(await Self.pairCode(d) == .notConnected, "an intent, but no link to pair over")
        let other = try RestoreIdentifier("other")
        try await d.submit(.register(other, uid: 0))
        do {
            try await d.daemon.pair(other, .address(T.band), from: Self.caller)
            Issue.record("Pair without an intent succeeded")
        } catch { #expect(error.code == .unknownPeripheral, "another identifier's intent does not count") }

        await fake.setInRange(T.band, true)
        try await eventually("the band connected") { await d.state(T.id, T.band) == "connected" }
        do {
            try await d.daemon.pair(T.id, .address(T.band), from: APICaller(name: ":1.10", uid: 1000))
            Issue.record("another user paired root's identifier's peripheral")
        } catch { #expect(error.code == .unknownIdentifier, "another user's identifier looks missing") }
        let pairs = await fake.calls.filter { if case .pair = $0 { true } else { false } }
        #expect(pairs.isEmpty, "no refused call reached BlueZ")
        await fake.refuseNextPairing(T.band, "org.bluez.Error.AuthenticationRejected")
        #expect(await Self.pairCode(d) == .authenticationFailed)
        let (bonded, trusted) = (await fake.isBonded(T.band), await fake.isTrusted(T.band))
        #expect(!bonded && !trusted, "nothing trusted after a failed pairing")
        await fake.refuseNextPairing(T.band, "org.bluez.Error.InProgress")
        #expect(await Self.pairCode(d) == .inProgress)
        #expect(await Self.pairCode(d) == nil, "then it pairs")
        await d.stop()
    }
}
