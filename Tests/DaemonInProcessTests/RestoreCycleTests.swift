import BlueZ
import BlueZFake
import Foundation
import InMemoryLogging
import Logging
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import RelinkStore
import Restoration
import Testing

/// The daemon driven in-process through a full restore cycle against the
/// fake bluetoothd: register, connect, subscribe, values, drop, reconnect,
/// restart. No bus and no child process: these run in the unit tier.
@Suite("Daemon in-process: restore cycle")
struct RestoreCycleTests {
    static let heartRate = BluetoothUUID(shortValue: 0x180D)
    static let measurement = BluetoothUUID(shortValue: 0x2A37)
    static let key = CharacteristicKey(service: heartRate, characteristic: measurement)
    static func address(_ last: UInt8) -> BluetoothAddress {
        (try? BluetoothAddress(octets: [0, 0, 0, 0, 0, last])) ?? { fatalError("six octets") }()
    }
    static let band = address(2)
    static let id = (try? RestoreIdentifier("band")) ?? { fatalError("valid") }()

    static func bandPeripheral(at address: BluetoothAddress = band, inRange: Bool = true) -> FakePeripheral {
        FakePeripheral(address: address, advertisedName: "HRM-2C41", gapName: "Wrist Band", services: [
            FakeService(uuid: heartRate, characteristics: [FakeCharacteristic(uuid: measurement, flags: ["notify"])]),
        ], inRange: inRange)
    }

    static func options(_ strategies: [Strategy] = Strategy.defaultOrder, deadline: ConnectionDeadline = .pendingUntilCancelled) throws -> ConnectionOptions {
        try ConnectionOptions(strategies: strategies, deadline: deadline, services: [heartRate])
    }

    /// Register, connect, subscribe; waits until the link is up and armed.
    static func linked(_ d: InProcessDaemon, strategies: [Strategy] = Strategy.defaultOrder) async throws {
        try await d.submit(.register(id, uid: 0))
        try await d.submit(.connect(id, band, try options(strategies)))
        try await d.submit(.subscribe(id, band, key))
        try await eventually("the band connected and armed") {
            guard await d.state(id, band) == "connected" else { return false }
            return await d.fake.calls.contains { if case .startNotify = $0 { true } else { false } }
        }
    }

    static func values(_ events: [(kind: String, payload: RelinkEvent?)]) -> [[UInt8]] {
        events.compactMap { if case .valueNotified(_, _, let v)? = $0.payload { v } else { nil } }
    }

    @Test func eachNotifiedValueReachesTheOutboxOnceInOrder() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Self.linked(d)
        for n: UInt8 in 1...20 { await fake.push(Self.band, service: Self.heartRate, characteristic: Self.measurement, [0, 60, n]) }
        try await eventually("20 values stored") { Self.values(try await d.events(Self.id)).count >= 20 }
        let events = try await d.events(Self.id)
        #expect(Self.values(events) == (1...20).map { [0, 60, $0] }, "each value once, in order")
        #expect(events.first?.kind == "connected")
        if case .connected(_, let address, let route, _)? = events.first?.payload {
            #expect(address == Self.band && route == .knownIdentifier)
        } else {
            Issue.record("the first event is not connected: \(events.first.map { "\($0)" } ?? "none")")
        }
        await d.stop()
    }

    @Test func afterARestartTheLinkIsRestoredAndValuesFlowAgain() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await Self.linked(first)
        await first.stop()
        #expect(await fake.isConnected(Self.band), "BlueZ keeps the link across relinkd's restart")

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the link restored") { await second.state(Self.id, Self.band) == "connected" }
        try await eventually("restored stored") { try await second.events(Self.id).contains { $0.kind == "restored" } }
        try await eventually("notifications armed again") {
            await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count >= 2
        }
        await fake.push(Self.band, service: Self.heartRate, characteristic: Self.measurement, [0, 61, 99])
        try await eventually("the value after the restart stored") { Self.values(try await second.events(Self.id)).contains([0, 61, 99]) }
        let kinds = try await second.events(Self.id).map(\.kind)
        #expect(kinds.contains("restored"), "a link up before the restart is reported restored: \(kinds)")
        let calls = await fake.calls
        #expect(calls.filter { $0 == .connect(Self.band.string) }.count == 1, "an adopted link needs no second Connect: \(calls)")
        await second.stop()
    }

    @Test func theScanStrategyFindsADeviceBlueZDoesNotKnow() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(), known: false)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.connect(Self.id, Self.band, try Self.options()))
        try await eventually("connected by scan, stored") { try await d.events(Self.id).contains { $0.kind == "connected" } }
        let events = try await d.events(Self.id)
        guard case .connected(_, _, let route, _)? = events.last(where: { $0.kind == "connected" })?.payload else {
            Issue.record("no connected event: \(events.map(\.kind))")
            return
        }
        #expect(route == .scan)
        #expect(await fake.calls.contains(.startDiscovery([Self.heartRate])))
        await d.stop()
    }

    @Test func theAlreadyConnectedStrategyAdoptsAnotherProgramsLink() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(), known: true)
        await fake.connectByAnotherProgram(Self.band)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.connect(Self.id, Self.band, try Self.options([.alreadyConnected])))
        try await eventually("adopted, stored") { try await d.events(Self.id).contains { $0.kind == "connected" } }
        let events = try await d.events(Self.id)
        guard case .connected(_, _, let route, _)? = events.first(where: { $0.kind == "connected" })?.payload else {
            Issue.record("no connected event: \(events.map(\.kind))")
            return
        }
        #expect(route == .alreadyConnected)
        await d.stop()
    }

    @Test func aLinkThatDropsIsReconnectedWhenThePeripheralComesBack() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Self.linked(d)
        await fake.setInRange(Self.band, false)
        try await eventually("the drop reported") { try await d.events(Self.id).map(\.kind).contains("disconnected") }
        #expect(await d.state(Self.id, Self.band) != "connected")
        await fake.setInRange(Self.band, true)
        try await eventually("reconnected, stored") { try await d.events(Self.id).filter { $0.kind == "connected" }.count == 2 }
        await fake.push(Self.band, service: Self.heartRate, characteristic: Self.measurement, [0, 70, 1])
        try await eventually("a value after the reconnection") { Self.values(try await d.events(Self.id)).contains([0, 70, 1]) }
        #expect(try await d.events(Self.id).map(\.kind).filter { $0 == "connected" }.count == 2)
        await d.stop()
    }

    /// A 30 s deadline on hand-moved time: the test takes no 30 s.
    @Test func anOverallTimeoutGivesUpOnAPeripheralThatNeverComes() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(inRange: false), known: true)
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.connect(Self.id, Self.band, try Self.options(deadline: .after(.seconds(30)))))
        try await eventually("the intent's timers armed") { clock.sleeperCount > 0 }
        clock.advance(by: .seconds(29))
        _ = await d.daemon.statusSnapshot()   // an input: what the woken timers posted is handled before it
        #expect(try await !d.events(Self.id).map(\.kind).contains("failed-to-connect"), "gave up before its deadline")
        #expect(await d.state(Self.id, Self.band) != "failed")
        clock.advance(by: .seconds(2))
        try await eventually("failed-to-connect stored") { try await d.events(Self.id).map(\.kind).contains("failed-to-connect") }
        guard case .failedToConnect(_, let reason)? = try await d.events(Self.id).first(where: { $0.kind == "failed-to-connect" })?.payload else {
            Issue.record("no payload")
            return
        }
        #expect(reason.failureClass == .timeout)
        #expect(await d.state(Self.id, Self.band) == "failed")
        await d.stop()
    }

    /// Twenty intents waiting for peripherals that never come: one task
    /// sleeps for all their timers (not one each: 3.4 KB and a task-group
    /// slot per timer, issue 31), and each deadline still fires, in order.
    @Test func everyIntentsTimersShareOneSleepingTask() async throws {
        let fake = FakeBlueZ()
        let addresses = (10..<30).map { Self.address($0) }
        for address in addresses {
            await fake.add(Self.bandPeripheral(at: address, inRange: false), known: true)
        }
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await d.submit(.register(Self.id, uid: 0))
        for address in addresses {
            clock.advance(by: .milliseconds(10))  // deadlines 10 ms apart, in the intents' order
            try await d.submit(.connect(Self.id, address, try Self.options(deadline: .after(.seconds(30)))))
        }
        try await eventually("the timers armed") { clock.sleeperCount > 0 }
        _ = await d.daemon.statusSnapshot()
        #expect(clock.sleeperCount == 1, "one task sleeps for the 20 intents' timers")
        clock.advance(by: .seconds(31))
        try await eventually("every intent gave up at its deadline") {
            try await d.events(Self.id).filter { $0.kind == "failed-to-connect" }.count == addresses.count
        }
        var peripherals: [PeripheralID] = []
        for address in addresses {
            guard let peripheral = await d.daemon.peripheralID(for: address) else { Issue.record("\(address) unknown"); return }
            peripherals.append(peripheral)
        }
        let failed = try await d.events(Self.id).compactMap { event -> PeripheralID? in
            guard case .failedToConnect(let peripheral, _)? = event.payload else { return nil }
            return peripheral
        }
        #expect(failed == peripherals, "in deadline order")
        await d.stop()
    }

    /// A start-up restoring many intents counts their first steps in one
    /// info line (at 10,000 intents, 70,000 lines were a third of start-up,
    /// issue 31); a small one journals each step as always. Failures and
    /// connections are never summarised.
    @Test(arguments: [3, Daemon.quietStartupIntents + 1]) func aLargeStartUpSumsUpItsIntentsFirstSteps(intents: Int) async throws {
        let fake = FakeBlueZ()
        let addresses = (100..<(100 + intents)).map { Self.address(UInt8($0)) }
        for address in addresses {
            await fake.add(Self.bandPeripheral(at: address, inRange: false), known: true)
        }
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(Self.id, uid: 0))
        for address in addresses { try await first.submit(.connect(Self.id, address, try Self.options())) }
        await first.stop()
        let journal = InMemoryLogHandler()
        let d = try await InProcessDaemon(fake: fake, directory: directory, journal: journal)
        // Start-up's own entries: up to "restored from the store" (a step
        // timer may fire after it, and its next round is journalled as always).
        let entries = journal.entries.prefix { !"\($0.message)".hasPrefix("restored from the store") }
        let decisions = entries.compactMap { entry -> (Logger.Level, String)? in
            guard case .string(let decision)? = entry.metadata["RELINK_DECISION"] else { return nil }
            return (entry.level, decision)
        }
        let steps = decisions.filter { $0.1 == "strategy-started" }
        let summaries = entries.filter { $0.metadata["RELINK_DECISION"] == .string("startup-steps-summarised") }
        if intents > Daemon.quietStartupIntents {
            #expect(steps.isEmpty, "no step at info level")
            #expect(summaries.count == 1)
            let line = summaries.first.map { "\($0.message)" } ?? ""
            #expect(line.contains("\(intents) restored intents") && line.contains("started \(intents)"), "\(line)")
        } else {
            #expect(steps.count >= intents, "each intent's steps: \(decisions.map(\.1))")
            #expect(summaries.isEmpty)
        }
        await d.stop()
    }

    /// A restart resumes each intent without writing its row again: the
    /// store keeps the row as it was, when it was requested included (10,000
    /// identical rows were a 0.7 s commit before READY, issue 31).
    @Test func aRestartDoesNotRewriteTheRowsItResumesUnchanged() async throws {
        let fake = FakeBlueZ()
        let away = Self.address(40)
        await fake.add(Self.bandPeripheral(at: away, inRange: false), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(Self.id, uid: 0))
        try await first.submit(.connect(Self.id, away, try Self.options()))
        await first.stop()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        let before = try await second.store.loadState().identifiers.flatMap(\.connections)
        await second.stop()
        let third = try await InProcessDaemon(fake: fake, directory: directory)
        let after = try await third.store.loadState().identifiers.flatMap(\.connections)
        #expect(before.count == 1)
        #expect(after == before, "resumed unchanged: not written again")
        #expect(after.first?.state == .pending)
        await third.stop()
    }

    @Test func aBluetoothdRestartIsFollowedByAReconnectionAndRearm() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Self.linked(d)
        await fake.restartBluetoothd()
        try await eventually("reconnected after bluetoothd restarted") {
            guard await d.state(Self.id, Self.band) == "connected" else { return false }
            return await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count >= 2
        }
        await fake.push(Self.band, service: Self.heartRate, characteristic: Self.measurement, [0, 80, 1])
        try await eventually("a value after bluetoothd's restart") { Self.values(try await d.events(Self.id)).contains([0, 80, 1]) }
        await d.stop()
    }
}
