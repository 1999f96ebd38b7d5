import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Per-user pairing (issue 24 item 4, docs/api/access.md "Pairing"): a user
/// may pair and unpair only a peripheral their own identifiers use or
/// used; for another user's peripheral `Pair`, `PairWith` and `Unpair`
/// answer exactly as for a peripheral relinkd does not know, and the bond
/// stays, also once its owner gave up its last use of it.
@Suite("Daemon in-process: pairing per user")
struct PairingAccessTests {
    typealias T = RestoreCycleTests
    static let alice = APICaller(name: ":1.20", uid: 1000)
    static let bob = APICaller(name: ":1.21", uid: 1001)
    static let bobs = (try? RestoreIdentifier("bobs")) ?? { fatalError("valid") }()
    static let nowhere = T.address(9)

    /// The error of `call`, nil when it succeeded.
    static func failure(_ call: () async throws(RelinkError) -> Void) async -> RelinkError? {
        do throws(RelinkError) {
            try await call()
            return nil
        } catch { return error }
    }

    /// What `call` on the band answers, with the band's address written as
    /// "ADDRESS" (to compare with the answer for an unknown address).
    static func answer(_ address: BluetoothAddress, _ call: (PeripheralRef) async throws(RelinkError) -> Void) async -> String {
        guard let error = await failure({ () async throws(RelinkError) in try await call(.address(address)) }) else { return "success" }
        return "\(error.name): \(error.message.replacingOccurrences(of: address.string, with: "ADDRESS"))"
    }

    @Test func anotherUserCanNeitherPairNorUnpairAUsersPeripheralNorTellItExists() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: Self.alice.uid))
        try await d.submit(.connect(T.id, T.band, try T.options()))
        try await d.submit(.subscribe(T.id, T.band, T.key))
        try await eventually("alice's band connected") { await d.state(T.id, T.band) == "connected" }
        try await d.daemon.pair(T.id, .address(T.band), from: Self.alice)
        #expect(await fake.isBonded(T.band))
        try await d.submit(.register(Self.bobs, uid: Self.bob.uid))

        let daemon = d.daemon, bobs = Self.bobs, bob = Self.bob
        let unpair: (PeripheralRef) async throws(RelinkError) -> Void = { ref throws(RelinkError) in try await daemon.unpair(bobs, ref, from: bob) }
        let pair: (PeripheralRef) async throws(RelinkError) -> Void = { ref throws(RelinkError) in try await daemon.pair(bobs, ref, from: bob) }
        let unknownUnpair = await Self.answer(Self.nowhere, unpair), unknownPair = await Self.answer(Self.nowhere, pair)
        #expect(unknownUnpair.hasPrefix("org.relink.Error.UnknownPeripheral"), "\(unknownUnpair)")
        #expect(await Self.answer(T.band, unpair) == unknownUnpair, "while alice uses it")
        #expect(await Self.answer(T.band, pair) == unknownPair)

        try await d.api(.unsubscribe(T.id, .address(T.band), T.key), as: Self.alice)
        try await d.submit(.cancel(T.id, T.band))
        #expect(await Self.answer(T.band, unpair) == unknownUnpair, "after alice gave up her last use of it")
        #expect(await fake.isBonded(T.band), "bob did not remove alice's bond")
        #expect(await !fake.calls.contains(.removeDevice(T.band.string)))

        #expect(await Self.failure { () async throws(RelinkError) in try await d.daemon.unpair(T.id, .address(T.band), from: Self.alice) } == nil,
                "alice, who used it, removes the bond")
        #expect(await !fake.isBonded(T.band))
        await d.stop()
    }
}
