import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// `CancelWith(peripheral, {remove_bond: true})` (issue 24, item 1): the
/// intent ends as with `Cancel`, and the bond goes with the last use of the
/// peripheral; while another identifier still uses it the bond stays and
/// the reply says why; without `remove_bond` nothing happens to the bond.
@Suite("Daemon in-process: CancelWith and the bond")
struct CancelWithBondTests {
    typealias T = RestoreCycleTests
    static let caller = APICaller(name: ":1.9", uid: 0)
    static let other = (try? RestoreIdentifier("other-app")) ?? { fatalError("valid") }()

    static func removals(_ fake: FakeBlueZ) async -> Int {
        await fake.calls.filter { if case .removeDevice = $0 { true } else { false } }.count
    }

    /// The band linked for `T.id` (and for `other` too when `shared`), paired.
    static func bonded(shared: Bool, paired: Bool = true) async throws -> InProcessDaemon {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        if shared {
            try await d.submit(.register(other, uid: 0))
            try await d.submit(.connect(other, T.band, try T.options()))
        }
        if paired { try await d.daemon.pair(T.id, .address(T.band), from: caller) }
        return d
    }

    @Test func theBondGoesWithTheLastUseAndStaysWhileAnotherIdentifierUsesIt() async throws {
        let d = try await Self.bonded(shared: true)
        let first = try await d.daemon.cancelWith(T.id, .address(T.band), removeBond: true, from: Self.caller)
        #expect(!first.removed && first.reason.contains("another identifier"), "\(first)")
        #expect(await d.fake.isBonded(T.band), "the other identifier keeps the bond")
        #expect(await Self.removals(d.fake) == 0)
        #expect(await d.state(T.id, T.band) == nil, "the intent ended anyway")

        let last = try await d.daemon.cancelWith(Self.other, .address(T.band), removeBond: true, from: Self.caller)
        #expect(last == Daemon.BondOutcome(removed: true, reason: ""))
        let (bonded, trusted) = (await d.fake.isBonded(T.band), await d.fake.isTrusted(T.band))
        #expect(!bonded && !trusted)
        #expect(await Self.removals(d.fake) == 1)
        await d.stop()
    }

    @Test func withoutRemoveBondOrWithoutABondNothingIsRemoved() async throws {
        let d = try await Self.bonded(shared: false)
        #expect(try await d.daemon.cancelWith(T.id, .address(T.band), removeBond: false, from: Self.caller) == .init(removed: false, reason: ""))
        #expect(await d.fake.isBonded(T.band), "not asked: the bond stays, as after Cancel")
        await d.stop()

        let unpaired = try await Self.bonded(shared: false, paired: false)
        let outcome = try await unpaired.daemon.cancelWith(T.id, .address(T.band), removeBond: true, from: Self.caller)
        #expect(!outcome.removed && outcome.reason.contains("not paired"), "\(outcome)")
        #expect(await Self.removals(unpaired.fake) == 0)
        await unpaired.stop()
    }
}
