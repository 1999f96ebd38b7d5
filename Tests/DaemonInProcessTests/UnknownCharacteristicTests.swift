import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// A subscription to a characteristic the peripheral does not have (issue
/// 21, item 9: a typo made relinkd reconnect the lock every 3 s for ever,
/// and every identifier sharing it saw each drop). Refused when the GATT
/// database is known; otherwise the link is rediscovered once at most, then
/// the subscription fails with an event and the link is left alone.
@Suite("Daemon in-process: a subscription to a characteristic the peripheral lacks")
struct UnknownCharacteristicTests {
    typealias T = RestoreCycleTests
    typealias S = SharedLinkTests
    /// Body Sensor Location, a second characteristic of the band's service.
    static let location = BluetoothUUID(shortValue: 0x2A38)
    /// A typo: not on the band.
    static let typo = CharacteristicKey(service: T.heartRate, characteristic: BluetoothUUID(shortValue: 0x2A39))
    /// A service the band does not have.
    static let noSuchService = CharacteristicKey(service: BluetoothUUID(shortValue: 0xFFF0), characteristic: BluetoothUUID(shortValue: 0xFFF1))

    static func band(inRange: Bool = true) -> FakePeripheral {
        FakePeripheral(address: T.band, advertisedName: "HRM-2C41", gapName: "Wrist Band", services: [
            FakeService(uuid: T.heartRate, characteristics: [
                FakeCharacteristic(uuid: T.measurement, flags: ["notify"]),
                FakeCharacteristic(uuid: location, flags: ["read"], value: [1]),
            ]),
        ], inRange: inRange)
    }

    static func disconnects(_ fake: FakeBlueZ) async -> Int {
        await fake.calls.filter { $0 == .disconnect(T.band.string) }.count
    }

    /// Whether `Status` (one snapshot) shows the band's link up with the
    /// measurement subscription not armed, and `STATUS=` counts it.
    static func shownNotArmed(_ d: InProcessDaemon) async throws -> Bool {
        let snapshot = await d.daemon.currentStatus
        let status = try JSONSerialization.jsonObject(with: Data(snapshot.json().utf8)) as? [String: Any]
        let connection = ((status?["identifiers"] as? [[String: Any]])?.first?["connections"] as? [[String: Any]])?.first
        let summary = await d.daemon.summary
        return connection?["state"] as? String == "connected" && connection?["unarmed"] as? [String] == [T.key.description]
            && summary.contains("1/1 links up") && summary.contains("1 subscription(s) not armed")
    }

    /// A daemon that registered the band (out of range), connected it with
    /// the known-identifier strategy and subscribed to `key`, stopped after
    /// `inspect`: the next daemon on `directory` takes the subscription as
    /// confirmed (made before it started).
    static func subscribedWhileAway(_ key: CharacteristicKey, inspect: (InProcessDaemon) async throws -> Void = { _ in })
        async throws -> (FakeBlueZ, String) {
        let fake = FakeBlueZ()
        await fake.add(Self.band(inRange: false), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(T.id, uid: 0))
        try await first.submit(.connect(T.id, T.band, try T.options([.knownIdentifier])))
        try await first.submit(.subscribe(T.id, T.band, key))
        try await inspect(first)
        await first.stop()
        return (fake, directory)
    }

    /// The `connected` events the band's identifier was sent: one per link.
    static func links(_ d: InProcessDaemon) async throws -> Int {
        try await d.events(T.id).count { $0.kind == "connected" }
    }

    static func subscriptions(_ d: InProcessDaemon) async -> Set<Subscription> {
        await d.daemon.core.planner.subscriptions
    }

    @Test func aSubscribeToACharacteristicMissingFromAKnownDatabaseIsRefused() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.band(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await S.shared(d)
        try await eventually("the sharer connected") { await d.state(S.second, T.band) == "connected-shared" }
        do {
            try await d.submit(.subscribe(S.second, T.band, Self.typo))
            Issue.record("a subscription to a characteristic the band lacks was accepted")
        } catch let error as RelinkError {
            #expect(error.code == .unknownCharacteristic, "\(error)")
            #expect(error.name == "org.relink.Error.UnknownCharacteristic")
        }
        #expect(await Self.subscriptions(d).allSatisfy { $0.characteristic != Self.typo }, "nothing stored")
        #expect(!(await d.daemon.core.gattGrace.isWaiting), "nothing to wait for, so nothing to reconnect")
        // A characteristic that is there is accepted as before.
        try await d.submit(.subscribe(S.second, T.band, CharacteristicKey(service: T.heartRate, characteristic: Self.location)))
        await d.stop()
    }

    @Test func readingACharacteristicMissingFromTheLinkSaysUnknownCharacteristic() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.band(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        let reply = await d.daemon.submit(.locate(T.id, .address(T.band), Self.typo), from: APICaller(name: ":1.1", uid: 0))
        guard case .failure(let error) = reply else {
            Issue.record("located a characteristic the band lacks")
            return
        }
        #expect(error.code == .unknownCharacteristic, "\(error)")
        await d.stop()
    }

    /// A subscription made before a restart may have been armed by the
    /// earlier run: relinkd does not drop it when its service is missing
    /// (a peripheral's GATT application restarting), it waits for it.
    @Test func aSubscriptionFromBeforeARestartIsConfirmed() async throws {
        var peripheral: PeripheralID?
        let (fake, directory) = try await Self.subscribedWhileAway(Self.noSuchService) { first in
            peripheral = await first.daemon.peripheralID(for: T.band)
            let id = try #require(peripheral)
            #expect(!(await first.daemon.core.gattGrace.isConfirmed(id, Self.noSuchService)), "never armed")
        }
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        #expect(await second.daemon.core.gattGrace.isConfirmed(try #require(peripheral), Self.noSuchService))
        await second.stop()
    }

    /// Subscribed while the link was down: the database was not known, so
    /// it was accepted. Once the link is up and the service's
    /// characteristics are seen without it, it fails at once: no reconnection.
    @Test func aSubscriptionMadeWhileTheLinkWasDownFailsWithAnEventAndTheLinkIsLeftAlone() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.band(inRange: false), known: true)
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await d.submit(.register(T.id, uid: 0))
        try await d.submit(.connect(T.id, T.band, try T.options([.knownIdentifier])))
        try await d.submit(.subscribe(T.id, T.band, T.key))
        try await d.submit(.subscribe(T.id, T.band, Self.typo))
        try await d.submit(.register(S.second, uid: 0))
        try await d.submit(.connect(S.second, T.band, try T.options([.knownIdentifier])))
        await fake.setInRange(T.band, true)
        try await eventually("the typo's subscription failed", advancing: clock) {
            try await d.events(T.id).contains { $0.kind == "subscription-failed" }
        }
        let failed = try await d.events(T.id).first { $0.kind == "subscription-failed" }?.payload
        guard case .subscriptionFailed(_, let key, let reason)? = failed else {
            Issue.record("no subscription-failed payload: \(String(describing: failed))")
            return
        }
        #expect(key == Self.typo)
        #expect(reason.errorName == "org.relink.Error.UnknownCharacteristic")
        #expect(await Self.subscriptions(d) == [Subscription(identifier: T.id, peripheral: try #require(await d.daemon.peripheralID(for: T.band)), characteristic: T.key)],
                "the failed subscription is removed, the other stays")
        #expect(await Self.disconnects(fake) == 0, "the link was never dropped for it")
        #expect(!(await d.daemon.core.gattGrace.isWaiting), "nothing is left to wait for: no later reconnection")
        let sharerKinds = try await S.linkEvents(d, S.second)
        #expect(sharerKinds == ["connected"], "the sharer saw no drop: \(sharerKinds)")
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 60, 1])
        try await eventually("the good subscription still delivers") { T.values(try await d.events(T.id)).contains([0, 60, 1]) }
        await d.stop()
    }

    /// A service the band lacks: the database is not known for it, so the
    /// link is rediscovered, once; then the subscription fails.
    @Test func aServiceNotOnThePeripheralIsRediscoveredOnceThenItsSubscriptionFails() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.band(), known: true)
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await T.linked(d, strategies: [.knownIdentifier])
        try await d.submit(.subscribe(T.id, T.band, Self.noSuchService))
        try await eventually("the subscription failed", advancing: clock) {
            try await d.events(T.id).contains { $0.kind == "subscription-failed" }
        }
        #expect(await Self.disconnects(fake) == 1, "one rediscovery, no more")
        #expect(!(await d.daemon.core.gattGrace.isWaiting), "nothing is left to wait for: no later reconnection")
        try await eventually("linked again after the one rediscovery") { await d.state(T.id, T.band) == "connected" }
        #expect(try await d.events(T.id).filter { $0.kind == "connected" }.count == 2)
        await d.stop()
    }
    /// Gateway finding G8: a confirmed subscription whose service stays
    /// away from a link that is up (the lock's GATT application came after
    /// the link, and bluetoothd's view of its database did not follow).
    /// relinkd reconnects three times in a row, then again with a back-off
    /// (30 s, then 60 s, ...) instead of only waiting for good; meanwhile
    /// `Status` and `STATUS=` say the subscription is not armed. Once the
    /// service is there, the next reconnection arms it and values flow.
    @Test func aConfirmedSubscriptionMissingFromAnUpLinkIsRediscoveredWithABackOffAndShownNotArmed() async throws {
        let battery = FakeService(uuid: BluetoothUUID(shortValue: 0x180F), characteristics: [
            FakeCharacteristic(uuid: BluetoothUUID(shortValue: 0x2A19), flags: ["read"], value: [90]),
        ])
        let (fake, directory) = try await Self.subscribedWhileAway(T.key)
        await fake.replaceServices(T.band, with: [battery])  // the heart rate service is not served (yet)
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: directory, clock: clock)
        await fake.setInRange(T.band, true)
        try await eventually("three reconnections in a row", advancing: clock) { await Self.disconnects(fake) >= GattGrace.retryLimit }
        try await eventually("linked again after the third, shown not armed", advancing: clock) {
            let links = try await Self.links(d)
            guard links == GattGrace.retryLimit + 1 else { return false }
            return try await Self.shownNotArmed(d)
        }
        // The back-off: the fourth reconnection comes 10 looks (30 s of
        // the manual clock) after the link came back, not at the next look.
        let linkedAgain = clock.now
        try await eventually("the fourth reconnection, after the back-off", advancing: clock, upTo: .seconds(120)) {
            await Self.disconnects(fake) == GattGrace.retryLimit + 1
        }
        let waited = linkedAgain.duration(to: clock.now)
        #expect(waited >= GattGrace.period * (GattGrace.lateRediscoveryLooks(0) - 1), "reconnected after \(waited)")
        try await eventually("linked again after the fourth, shown not armed", advancing: clock) {
            let links = try await Self.links(d)
            guard links == GattGrace.retryLimit + 2 else { return false }
            return try await Self.shownNotArmed(d)
        }
        await fake.replaceServices(T.band, with: Self.band().services)  // the lock's application is up now
        let peripheral = try #require(await d.daemon.peripheralID(for: T.band))
        try await eventually("armed after the next reconnection", advancing: clock, by: .milliseconds(500), upTo: .seconds(300)) {
            await d.daemon.core.planner.armedCharacteristics(of: peripheral).contains(T.key)
        }
        let armedSummary = await d.daemon.summary
        #expect(!armedSummary.contains("not armed"), "STATUS=: \(armedSummary)")
        await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 61, 1])
        try await eventually("values flow") { T.values(try await d.events(T.id)).contains([0, 61, 1]) }
        await d.stop()
    }
}
