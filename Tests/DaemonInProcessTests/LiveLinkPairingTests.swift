import BlueZ
import BlueZFake
import DBus
import Foundation
import InMemoryLogging
import Logging
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Pairing with relinkd's own capability where bluetoothd 5.81 and later
/// would use the adapter's (docs/real-bluez.md, G12): their `Device1.Pair`
/// of a connected LE device raises the live link's security with the
/// default agent's capability; only an unconnected device is paired with
/// the caller's. The fake bluetoothd plays that rule
/// (`pairLiveLinksWithTheAdaptersCapability`), with a default agent that
/// shows only (`DisplayOnly`, as the gateway's lock agent).
@Suite("Daemon in-process: pairing a live link with relinkd's capability")
struct LiveLinkPairingTests {
    typealias T = RestoreCycleTests
    typealias P = PairingRequestTests

    /// Index of the last call in `calls` that `matches`, if any.
    static func last(_ calls: [FakeBlueZ.Call], _ matches: (FakeBlueZ.Call) -> Bool) -> Int? {
        calls.lastIndex(where: matches)
    }

    @Test func aPasskeyPairingRefusedOnTheLiveLinkIsMadeAgainWithoutItWhileRelinkdsConnectWaits() async throws {
        let fake = FakeBlueZ()
        await fake.pairLiveLinksWithTheAdaptersCapability(.displayOnly)
        await fake.add(T.bandPeripheral(), known: true)
        let journal = InMemoryLogHandler()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), journal: journal)
        try await T.linked(d)
        await fake.demand(T.band, .passkey, passkey: 654_321)
        try await d.api(.watch(T.id, after: 0), as: P.caller)
        let before = await fake.calls.count
        let pairing = P.pairing(d, .keyboardOnly)
        let (n, kind, _) = try await P.request(d)
        #expect(kind == "passkey", "relinkd's KeyboardOnly was asked, not the adapter's DisplayOnly")
        // The pairing made the link again; relinkd took it as its intent's
        // link while the pairing waits for the passkey, and its own Connect
        // has not gone to bluetoothd (which would answer Pair InProgress).
        try await eventually("the band linked again for the pairing") { await d.state(T.id, T.band) == "connected" }
        let during = Array(await fake.calls.dropFirst(before))
        let pairs = during.indices.filter { if case .pair = during[$0] { true } else { false } }
        let down = try #require(Self.last(during) { $0 == .disconnect(T.band.string) }, "the link taken down: \(during)")
        #expect(pairs.count == 2 && pairs[0] < down && down < pairs[1], "Pair on the live link, then without it: \(during)")
        #expect(!during.contains(.connect(T.band.string)), "relinkd's Connect waits for the pairing: \(during)")

        #expect(await P.answer(d, n, accept: true, passkey: 654_321) == nil)
        #expect(await pairing.value == nil)
        let (bonded, trusted) = (await fake.isBonded(T.band), await fake.isTrusted(T.band))
        #expect(bonded && trusted)
        let reasons = try await d.events(T.id).compactMap { event -> ConnectionFailure?? in
            if case .disconnected(_, let reason)? = event.payload { reason } else { nil }
        }
        #expect(reasons.count == 1, "the program is told the link went down, once: \(reasons)")
        #expect(reasons.first??.message.contains(LinkEndCause.local.rawValue) == true,
                "ended by this host, as bluetoothd 5.83 would say, so not a link that failed at once: \(reasons)")
        try await eventually("values flow on the paired link") {
            await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 61, 1])
            return T.values(try await d.events(T.id)).contains([0, 61, 1])
        }
        #expect(journal.entries.contains { $0.metadata["RELINK_EVENT"] == .string("pairing-takes-link-down") })
        await d.stop()
    }

    /// bluetoothd 5.66 pairs the live link with relinkd's capability: a
    /// pairing whose request relinkd's client answered wrongly fails
    /// there, and is not made again without the link.
    @Test func aPairingThatAskedRelinkdsAgentKeepsItsLinkWhenItFails() async throws {
        let fake = FakeBlueZ()
        let d = try await P.linked(fake, demanding: .passkey, passkey: 654_321)
        let before = await fake.calls.count
        let pairing = P.pairing(d, .keyboardOnly)
        let (n, _, _) = try await P.request(d)
        #expect(await P.answer(d, n, accept: true, passkey: 111_111) == nil)
        #expect(await pairing.value?.code == .authenticationFailed)
        let calls = Array(await fake.calls.dropFirst(before))
        #expect(!calls.contains(.disconnect(T.band.string)) && calls.filter { if case .pair = $0 { true } else { false } }.count == 1,
                "one Pair, over the live link: \(calls)")
        #expect(await d.state(T.id, T.band) == "connected")
        await d.stop()
    }

    @Test func justWorksAndABondedDeviceKeepTheirLink() async throws {
        let fake = FakeBlueZ()
        await fake.pairLiveLinksWithTheAdaptersCapability(.displayOnly)
        let d = try await P.linked(fake, demanding: .passkey, passkey: 1)
        await fake.demand(T.band, .authorization)
        let before = await fake.calls.count
        #expect(await P.pairing(d, .noInputNoOutput).value?.code == .authenticationFailed,
                "Just Works cannot meet a peripheral that asks")
        #expect(await !fake.calls.dropFirst(before).contains(.disconnect(T.band.string)), "Just Works pairs over the live link")

        await fake.demand(T.band, .confirmation(7))
        let pairing = P.pairing(d, .displayYesNo)
        let (n, _, _) = try await P.request(d)
        #expect(await P.answer(d, n, accept: true) == nil)
        #expect(await pairing.value == nil)
        try await eventually("linked again") { await d.state(T.id, T.band) == "connected" }
        let after = await fake.calls.count
        #expect(await P.pairing(d, .keyboardOnly).value == nil, "already paired")
        #expect(await !fake.calls.dropFirst(after).contains(.disconnect(T.band.string)), "a bonded device keeps its link")
        await d.stop()
    }
}
