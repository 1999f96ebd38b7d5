import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// `Central1.Unpair` (issue 24): a client removes the bond with its last
/// use of a peripheral. Refused while any identifier (its own included)
/// has an intent or a subscription on it; then bluetoothd's
/// `RemoveDevice` forgets the keys and trust, with no `bond-removed`
/// event (relinkd removed it itself).
@Suite("Daemon in-process: Unpair")
struct UnpairTests {
    typealias T = RestoreCycleTests
    static let caller = APICaller(name: ":1.9", uid: 0)

    static func unpairCode(_ d: InProcessDaemon, _ id: RestoreIdentifier = T.id) async -> RelinkErrorName? {
        do {
            try await d.daemon.unpair(id, .address(T.band), from: caller)
            return nil
        } catch { return error.code }
    }

    @Test func theLastUseRemovesTheBondAndAnyUseKeepsIt() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await d.daemon.pair(T.id, .address(T.band), from: Self.caller)
        #expect(await fake.isBonded(T.band))
        #expect(await Self.unpairCode(d) == .notPermitted, "its own intent and subscription still use it")

        let other = try RestoreIdentifier("other")
        try await d.submit(.register(other, uid: 0))
        try await d.submit(.connect(other, T.band, try T.options()))
        try await d.api(.unsubscribe(T.id, .address(T.band), T.key))
        try await d.submit(.cancel(T.id, T.band))
        #expect(await Self.unpairCode(d) == .notPermitted, "another identifier's intent uses the bond")
        #expect(await fake.isBonded(T.band))
        #expect(await !fake.calls.contains(.removeDevice(T.band.string)))

        try await d.submit(.cancel(other, T.band))
        #expect(await Self.unpairCode(d) == nil)
        let bonded = await fake.isBonded(T.band), trusted = await fake.isTrusted(T.band)
        #expect(!bonded && !trusted, "bluetoothd forgot the keys and the trust")
        #expect(await fake.calls.filter { $0 == .removeDevice(T.band.string) }.count == 1)
        #expect(await Self.unpairCode(d) == nil, "nothing left to remove is success")
        #expect(try await d.events(T.id).allSatisfy { $0.kind != "bond-removed" }, "relinkd removed it itself: no event")
        await d.stop()
    }
}
