import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// `Connect`'s `pairing_capability` (issue 24): pairing on demand and `Pair`
/// register relinkd's agent with the intent's capability, so a peripheral
/// that demands a passkey is paired on demand through the client's answer
/// to a `pairing-request` event; a refused answer, or no client attached,
/// is `AuthenticationFailed` once, no loop; the capability is stored with
/// the intent and used after a restart.
@Suite("Daemon in-process: pairing capability per intent")
struct PairingCapabilityTests {
    typealias T = RestoreCycleTests
    typealias P = PairingOnDemandTests
    typealias R = PairingRequestTests
    static let passkey: UInt32 = 314_159

    /// The band of ``PairingOnDemandTests`` demanding a passkey; the
    /// identifier connected with `capability`; a client watches unless
    /// `watching` is false.
    static func linked(_ directory: String, capability: AgentCapability, watching: Bool = true,
                       fake: FakeBlueZ? = nil) async throws -> InProcessDaemon {
        let fake = if let fake { fake } else { await P.band() }
        await fake.demand(T.band, .passkey, passkey: passkey)
        let d = try await InProcessDaemon(fake: fake, directory: directory)
        try await d.submit(.register(T.id, uid: 0))
        var options = try T.options()
        options.pairingCapability = capability
        try await d.submit(.connect(T.id, T.band, options))
        try await eventually("the band connected") { await d.state(T.id, T.band) == "connected" }
        if watching { try await d.api(.watch(T.id, after: 0), as: R.caller) }
        return d
    }

    /// A read through pairing on demand, in a task: its value or its error code.
    static func reading(_ d: InProcessDaemon) -> Task<Result<[UInt8], RelinkError>, Never> {
        Task {
            do { return .success(try await P.read(d)) } catch let error as RelinkError { return .failure(error) } catch {
                return .failure(RelinkError(.failed, "\(error)"))
            }
        }
    }

    @Test func aPasskeyLockIsPairedOnDemandThroughTheClientsAnswer() async throws {
        let d = try await Self.linked(try InProcessDaemon.temporaryDirectory(), capability: .keyboardDisplay)
        let read = Self.reading(d)
        let (n, kind, _) = try await R.request(d)
        #expect(kind == "passkey", "the agent was registered KeyboardDisplay: the request reached the client")
        #expect(await R.answer(d, n, accept: true, passkey: Self.passkey) == nil)
        #expect(try await read.value.get() == [2], "paired on demand, read again")
        #expect(await d.fake.isBonded(T.band))
        #expect(await P.pairCalls(d.fake) == 1)
        await d.stop()
    }

    @Test func aRefusedAnswerIsAuthenticationFailedOnceAndNoClientIsRefusedAtOnce() async throws {
        let d = try await Self.linked(try InProcessDaemon.temporaryDirectory(), capability: .keyboardOnly)
        let read = Self.reading(d)
        let (n, _, _) = try await R.request(d)
        #expect(await R.answer(d, n, accept: false) == nil)
        #expect(await read.value.failureCode == .authenticationFailed)
        #expect(await P.pairCalls(d.fake) == 1, "one pairing for one call")
        await d.stop()

        let alone = try await Self.linked(try InProcessDaemon.temporaryDirectory(), capability: .keyboardOnly, watching: false)
        #expect(await Self.reading(alone).value.failureCode == .authenticationFailed, "no client to answer: refused")
        #expect(try await alone.events(T.id).allSatisfy { $0.kind != "pairing-request" })
        #expect(await P.pairCalls(alone.fake) == 1)
        await alone.stop()
    }

    @Test func justWorksByDefaultCannotPairAPasskeyLock() async throws {
        let d = try await Self.linked(try InProcessDaemon.temporaryDirectory(), capability: .noInputNoOutput)
        #expect(await Self.reading(d).value.failureCode == .authenticationFailed)
        #expect(try await d.events(T.id).allSatisfy { $0.kind != "pairing-request" })
        await d.stop()
    }

    @Test func pairWithoutACapabilityTakesTheIntents() async throws {
        let d = try await Self.linked(try InProcessDaemon.temporaryDirectory(), capability: .keyboardDisplay)
        let pairing = Task { () -> RelinkError? in
            do { try await d.daemon.pair(T.id, .address(T.band), from: R.caller) } catch let error as RelinkError { return error } catch {
                return RelinkError(.failed, "\(error)")
            }
            return nil
        }
        let (n, kind, _) = try await R.request(d)
        #expect(kind == "passkey")
        #expect(await R.answer(d, n, accept: true, passkey: Self.passkey) == nil)
        #expect(await pairing.value == nil)
        #expect(await d.fake.isBonded(T.band))
        await d.stop()
    }

    @Test func theStoredCapabilityIsUsedAfterARestart() async throws {
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await Self.linked(directory, capability: .keyboardDisplay, watching: false)
        let fake = first.fake
        await first.stop()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the link restored") { await second.state(T.id, T.band) == "connected" }
        try await second.api(.watch(T.id, after: 0), as: R.caller)
        let read = Self.reading(second)
        let (n, kind, _) = try await R.request(second)
        #expect(kind == "passkey")
        #expect(await R.answer(second, n, accept: true, passkey: Self.passkey) == nil)
        #expect(try await read.value.get() == [2])
        await second.stop()
    }
}

extension Result where Failure == RelinkError {
    /// The error's code, nil on success.
    var failureCode: RelinkErrorName? {
        if case .failure(let error) = self { error.code } else { nil }
    }
}
