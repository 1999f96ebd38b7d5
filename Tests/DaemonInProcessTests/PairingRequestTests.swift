import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Passkey and confirmation requests of relinkd's agent forwarded to the
/// identifier's client (issue 24, pair3): `PairWith` with a capability, the
/// `pairing-request` event, `AnswerPairing`, the answer bound, no client
/// attached, another user's answer.
@Suite("Daemon in-process: pairing requests")
struct PairingRequestTests {
    typealias T = RestoreCycleTests
    static let caller = APICaller(name: ":1.9", uid: 0)

    /// A linked band whose pairing demands `request`; a client watches unless `watching` is false.
    static func linked(_ fake: FakeBlueZ, demanding request: AgentRequest, passkey: UInt32? = nil, watching: Bool = true,
                       clock: DaemonClock = .continuous) async throws -> InProcessDaemon {
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await T.linked(d)
        await fake.demand(T.band, request, passkey: passkey)
        if watching { try await d.api(.watch(T.id, after: 0), as: caller) }
        return d
    }

    /// `PairWith` in a task: its error code, nil when it paired.
    static func pairing(_ d: InProcessDaemon, _ capability: AgentCapability) -> Task<RelinkError?, Never> {
        Task {
            do {
                try await d.daemon.pair(T.id, .address(T.band), capability: capability, from: caller)
                return nil
            } catch let error as RelinkError { return error } catch { return RelinkError(.failed, "\(error)") }
        }
    }

    /// The newest `pairing-request` event: (request, kind, passkey).
    static func request(_ d: InProcessDaemon) async throws -> (UInt64, String, UInt32?) {
        var found: (UInt64, String, UInt32?)?
        try await eventually("a pairing-request event") {
            for event in try await d.events(T.id).reversed() {
                if case .pairingRequest(_, let n, let kind, let passkey)? = event.payload {
                    found = (n, kind, passkey)
                    return true
                }
            }
            return false
        }
        return try #require(found)
    }

    static func answer(_ d: InProcessDaemon, _ n: UInt64, accept: Bool, passkey: UInt32 = 0, as caller: APICaller = caller) async -> RelinkErrorName? {
        do {
            try await d.api(.answerPairing(T.id, n, accept: accept, passkey: passkey), as: caller)
            return nil
        } catch { return (error as? RelinkError)?.code ?? .failed }
    }

    @Test func aConfirmationIsForwardedWithItsPasskeyAndTheOwnersYesPairs() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake, demanding: .confirmation(123_456))
        let pairing = Self.pairing(d, .displayYesNo)
        let (n, kind, shown) = try await Self.request(d)
        #expect(kind == "confirmation" && shown == 123_456)
        #expect(await Self.answer(d, n, accept: true, as: APICaller(name: ":1.10", uid: 1000)) == .unknownIdentifier,
                "another user cannot answer root's identifier's request")
        #expect(await Self.answer(d, n, accept: true) == nil)
        #expect(await pairing.value == nil)
        let (bonded, trusted) = (await fake.isBonded(T.band), await fake.isTrusted(T.band))
        #expect(bonded && trusted)
        #expect(await Self.answer(d, n, accept: true) == .unknownRequest, "answered once")
        await d.stop()
    }

    @Test func aPasskeyTypedByTheClientPairsAndAWrongOneOrANoFails() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake, demanding: .passkey, passkey: 654_321)
        var pairing = Self.pairing(d, .keyboardDisplay)
        var (n, kind, shown) = try await Self.request(d)
        #expect(kind == "passkey" && shown == nil)
        #expect(await Self.answer(d, n, accept: true, passkey: 111_111) == nil)
        #expect(await pairing.value?.code == .authenticationFailed, "a wrong passkey")
        #expect(await !fake.isBonded(T.band))

        pairing = Self.pairing(d, .keyboardDisplay)
        let first = n
        try await eventually("a second request") { try await Self.request(d).0 > first }
        (n, kind, shown) = try await Self.request(d)
        #expect(await Self.answer(d, n, accept: false) == nil)
        #expect(await pairing.value?.code == .authenticationFailed, "the client said no")

        pairing = Self.pairing(d, .keyboardDisplay)
        let second = n
        try await eventually("a third request") { try await Self.request(d).0 > second }
        (n, _, _) = try await Self.request(d)
        #expect(await Self.answer(d, n, accept: true, passkey: 654_321) == nil)
        #expect(await pairing.value == nil)
        #expect(await fake.isBonded(T.band))
        await d.stop()
    }

    @Test func withNoClientAttachedTheRequestIsRefusedAtOnce() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake, demanding: .confirmation(42), watching: false)
        let failure = await Self.pairing(d, .displayYesNo).value
        #expect(failure?.code == .authenticationFailed)
        #expect(try await d.events(T.id).allSatisfy { $0.kind != "pairing-request" }, "no event: nobody to answer it")
        #expect(await !fake.isBonded(T.band))
        await d.stop()
    }

    @Test func justWorksCannotAnswerAPeripheralThatDemandsAConfirmationAndALaterPairWithStillForwards() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake, demanding: .confirmation(42))
        #expect(await Self.pairing(d, .noInputNoOutput).value?.code == .authenticationFailed)
        #expect(try await d.events(T.id).allSatisfy { $0.kind != "pairing-request" })
        // The agent object was exported by that Just Works pairing; it stays.
        let pairing = Self.pairing(d, .displayYesNo)
        let (n, _, _) = try await Self.request(d)
        #expect(await Self.answer(d, n, accept: true) == nil)
        #expect(await pairing.value == nil)
        await d.stop()
    }

    @Test func aRequestOfTheRelinkdBeforeARestartIsNotOneOfTheNextAndCannotBeAnswered() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        await fake.add(T.bandPeripheral(), known: true)
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await T.linked(first)
        await fake.demand(T.band, .confirmation(5))
        try await first.api(.watch(T.id, after: 0), as: Self.caller)
        let before = Self.pairing(first, .displayYesNo)
        let (old, _, _) = try await Self.request(first)
        #expect(await Self.answer(first, old, accept: false) == nil)
        _ = await before.value
        await first.stop()

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the link restored") { await second.state(T.id, T.band) == "connected" }
        try await second.api(.watch(T.id, after: 0), as: Self.caller)
        #expect(await Self.answer(second, old, accept: true) == .unknownRequest, "the old event's request is gone")
        let pairing = Self.pairing(second, .displayYesNo)
        try await eventually("a request of the new relinkd") { try await Self.request(second).0 != old }
        let (new, _, _) = try await Self.request(second)
        #expect(await Self.answer(second, new, accept: true) == nil)
        #expect(await pairing.value == nil)
        await second.stop()
    }

    @Test func anUnansweredRequestIsCanceledAtItsBoundAndPairFailsSayingSo() async throws {
        let fake = FakeBlueZ()
        let clock = DaemonClock.manual()
        let d = try await Self.linked(fake, demanding: .confirmation(7), clock: clock)
        let pairing = Self.pairing(d, .displayYesNo)
        let (n, _, _) = try await Self.request(d)
        let outcome = Outcome()
        Task { await outcome.set(await pairing.value) }
        try await eventually("Pair failed after the request's bound", advancing: clock, by: .seconds(1), upTo: Daemon.pairingAnswerBound * 2) {
            await outcome.done
        }
        #expect(await Self.answer(d, n, accept: true) == .unknownRequest, "too late")
        let failure = await outcome.failure
        #expect(failure?.code == .authenticationFailed)
        #expect(failure?.message.contains("not answered") == true, "\(String(describing: failure?.message))")
        #expect(await !fake.isBonded(T.band))
        await d.stop()
    }
}

/// What a pairing task ended with, once it ended.
private actor Outcome {
    private(set) var done = false
    private(set) var failure: RelinkError?
    func set(_ failure: RelinkError?) {
        self.failure = failure
        done = true
    }
}
