import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Pairing on demand (issue 24): a read, write or subscription the
/// peripheral refuses for want of encryption (BlueZ's NotPermitted "Not
/// paired") makes relinkd pair once through its agent and try again once;
/// a failed pairing is `AuthenticationFailed` (the call's error, or a
/// `subscription-failed` event) and never a loop; an intent connected with
/// `pair_on_demand` off gets the refusal as it is, also after a restart.
@Suite("Daemon in-process: pairing on demand")
struct PairingOnDemandTests {
    typealias T = RestoreCycleTests
    static let caller = APICaller(name: ":1.9", uid: 0)
    static let location = BluetoothUUID(shortValue: 0x2A38)
    static let locationKey = CharacteristicKey(service: T.heartRate, characteristic: location)

    /// The band with a readable, writable body-location characteristic
    /// that needs an encrypted link.
    static func band(encryptedMeasurement: Bool = false) async -> FakeBlueZ {
        let fake = FakeBlueZ()
        await fake.add(FakePeripheral(address: T.band, advertisedName: "HRM-2C41", gapName: "Wrist Band", services: [
            FakeService(uuid: T.heartRate, characteristics: [
                FakeCharacteristic(uuid: T.measurement, flags: ["notify"]),
                FakeCharacteristic(uuid: location, flags: ["read", "write", "encrypt-read", "encrypt-write"], value: [2]),
            ]),
        ]), known: true)
        await fake.requireEncryption(T.band, service: T.heartRate, characteristic: location)
        if encryptedMeasurement { await fake.requireEncryption(T.band, service: T.heartRate, characteristic: T.measurement) }
        return fake
    }

    static func pairCalls(_ fake: FakeBlueZ) async -> Int {
        await fake.calls.filter { if case .pair = $0 { true } else { false } }.count
    }

    /// `Central1.Read` as relinkd's API runs it: the loop locates the
    /// characteristic, the read runs outside it through pairing on demand.
    static func read(_ d: InProcessDaemon) async throws -> [UInt8] {
        let path = try #require(try await d.api(.locate(T.id, .address(T.band), locationKey)).characteristic)
        return try await d.daemon.pairingOnDemand(T.id, .address(T.band), from: caller, operation: "Read") { try await d.fake.read(path, timeout: .seconds(5)) }
    }

    static func write(_ d: InProcessDaemon, _ value: [UInt8]) async throws {
        let path = try #require(try await d.api(.locate(T.id, .address(T.band), locationKey)).characteristic)
        try await d.daemon.pairingOnDemand(T.id, .address(T.band), from: caller, operation: "Write") {
            try await d.fake.write(path, value, withResponse: true, timeout: .seconds(5))
        }
    }

    @Test func aReadRefusedForEncryptionPairsOnceThenSucceedsAndLaterCallsDoNotPairAgain() async throws {
        let fake = await Self.band()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        #expect(try await Self.read(d) == [2], "refused, paired, read again")
        #expect(await Self.pairCalls(fake) == 1)
        let (bonded, trusted) = (await fake.isBonded(T.band), await fake.isTrusted(T.band))
        #expect(bonded && trusted, "bonded and trusted, as after Pair")
        try await Self.write(d, [3])
        #expect(try await Self.read(d) == [3])
        #expect(await Self.pairCalls(fake) == 1, "the bond serves every later call")
        await d.stop()
    }

    @Test func aWriteRefusedForEncryptionPairsToo() async throws {
        let fake = await Self.band()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await Self.write(d, [4])
        #expect(await Self.pairCalls(fake) == 1)
        #expect(try await Self.read(d) == [4])
        await d.stop()
    }

    @Test func aFailedPairingIsAuthenticationFailedAndIsNotRepeated() async throws {
        let fake = await Self.band()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        await fake.refuseNextPairing(T.band, "org.bluez.Error.AuthenticationRejected")
        do {
            _ = try await Self.read(d)
            Issue.record("the read succeeded without a bond")
        } catch let error as RelinkError {
            #expect(error.code == .authenticationFailed)
        }
        #expect(await Self.pairCalls(fake) == 1, "one pairing for one call, no retry loop")
        let bonded = await fake.isBonded(T.band), trusted = await fake.isTrusted(T.band)
        #expect(!bonded && !trusted)
        #expect(try await Self.read(d) == [2], "the next call pairs again, and this time it works")
        #expect(await Self.pairCalls(fake) == 2)
        await d.stop()
    }

    @Test func withPairOnDemandOffTheRefusalReachesTheClientAndTheChoiceOutlivesARestart() async throws {
        let fake = await Self.band()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(T.id, uid: 0))
        var options = try T.options()
        options.pairOnDemand = false
        try await first.submit(.connect(T.id, T.band, options))
        try await eventually("the band connected") { await first.state(T.id, T.band) == "connected" }
        await Self.expectRefused(first)
        await first.stop()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the link restored") { await second.state(T.id, T.band) == "connected" }
        await Self.expectRefused(second)
        #expect(await Self.pairCalls(fake) == 0, "relinkd never paired")
        await second.stop()
    }

    static func expectRefused(_ d: InProcessDaemon) async {
        do {
            _ = try await read(d)
            Issue.record("the read succeeded without a bond")
        } catch let error as BlueZError {
            #expect(error.name == "org.bluez.Error.NotPermitted" && error.message == "Not paired")
            #expect(APIInterfaces.gattError(error, "Read").code == .notPermitted, "the client's error")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aSubscriptionRefusedForEncryptionPairsAndArmsAndValuesFlow() async throws {
        let fake = await Self.band(encryptedMeasurement: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("paired and notifying") {
            guard await fake.isBonded(T.band) else { return false }
            return await fake.mirror.characteristic(device: fake.devicePath(T.band), service: T.heartRate.description,
                                                    characteristic: T.measurement.description)?.notifying == true
        }
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 70, 1])
        try await eventually("the value stored") { T.values(try await d.events(T.id)) == [[0, 70, 1]] }
        #expect(await Self.pairCalls(fake) == 1)
        #expect(try await d.events(T.id).allSatisfy { $0.kind != "subscription-failed" })
        await d.stop()
    }

    @Test func aSubscriptionWhosePairingFailsGetsOneEventNamingAuthenticationFailed() async throws {
        let fake = await Self.band(encryptedMeasurement: true)
        await fake.refuseNextPairing(T.band, "org.bluez.Error.AuthenticationFailed")
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("subscription-failed stored") { try await d.events(T.id).contains { $0.kind == "subscription-failed" } }
        let failed = try await d.events(T.id).compactMap { event -> ConnectionFailure? in
            if case .subscriptionFailed(_, let key, let reason)? = event.payload, key == T.key { reason } else { nil }
        }
        #expect(failed.map(\.errorName) == [RelinkErrorName.authenticationFailed.rawValue])
        #expect(await Self.pairCalls(fake) == 1, "one pairing on this link, no loop")
        await d.stop()
    }
}
