import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Synchronization
import Testing

/// A launcher that records what relinkd asks to start and answers as told.
final class RecordingLauncher: ProgramLauncher {
    private let state = Mutex<(starts: [String], outcome: LaunchStartOutcome, refused: [UInt32: RelinkError])>(([], .started, [:]))

    var starts: [String] { state.withLock { $0.starts } }
    func answer(_ outcome: LaunchStartOutcome) { state.withLock { $0.outcome = outcome } }
    func refuse(_ uid: UInt32, _ error: RelinkError) { state.withLock { $0.refused[uid] = error } }

    func start(_ spec: LaunchSpec, uid: UInt32) async -> LaunchStartOutcome {
        state.withLock { $0.starts.append(spec.systemdUnit ?? spec.busName); return $0.outcome }
    }

    func check(_ spec: LaunchSpec, uid: UInt32) async throws(RelinkError) {
        if let error = state.withLock({ $0.refused[uid] }) { throw error }
    }
}

/// Relaunch in-process (docs/relaunch.md): an event committed for an
/// identifier with a launch spec and no attached client starts its program
/// once; the registration that answers gets the launch reason; a program
/// that never comes is started at most the burst in the window.
@Suite("Daemon in-process: relaunch")
struct RelaunchTests {
    typealias Band = RestoreCycleTests
    static let busName = "org.example.Band"
    static let program = APICaller(name: ":1.50", uid: 0)

    /// A linked band whose identifier has a spec waking on values, and no client attached.
    func setUp(clock: DaemonClock = .continuous, wakeOn: [String] = ["value-notified"]) async throws -> (InProcessDaemon, RecordingLauncher) {
        let fake = FakeBlueZ()
        await fake.add(Band.bandPeripheral(), known: true)
        let launcher = RecordingLauncher()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock, launcher: launcher)
        try await d.api(.register(Band.id, nameRule: nil, replay: true, eventLimit: nil), as: Self.program)
        try await d.api(.setLaunch(Band.id, LaunchSpec(busName: Self.busName, wakeOn: wakeOn)), as: Self.program)
        try await d.submit(.connect(Band.id, Band.band, try Band.options()))
        try await d.submit(.subscribe(Band.id, Band.band, Band.key))
        // Connected and armed: a value pushed before StartNotify is no
        // event and wakes nothing (the test failed so about once in three runs).
        try await eventually("the band connected and armed") {
            guard await d.state(Band.id, Band.band) == "connected" else { return false }
            return await d.fake.calls.contains { if case .startNotify = $0 { true } else { false } }
        }
        await d.daemon.clientLeft(Self.program.name)  // the program died
        return (d, launcher)
    }

    func push(_ d: InProcessDaemon, _ n: UInt8) async {
        await d.fake.push(Band.band, service: Band.heartRate, characteristic: Band.measurement, [0, 60, n])
    }

    /// `launch_reason` of a restored state, nil when absent.
    static func reason(_ result: APIResult) -> LaunchReason? {
        guard result.values.count == 2, case .dictionary(_, _, let entries) = result.values[1] else { return nil }
        for entry in entries {
            if case .string("launch_reason") = entry.key, case .variant(let value) = entry.value { return LaunchOptions.reason(in: value) }
        }
        return nil
    }

    @Test func aValueWithNoClientStartsTheProgramOnceAndItsRegistrationSaysWhy() async throws {
        let (d, launcher) = try await setUp()
        #expect(launcher.starts.isEmpty, "connected does not wake this spec")
        await push(d, 1)
        try await eventually("the program started") { launcher.starts == [Self.busName] }
        await push(d, 2)
        await push(d, 3)
        try await eventually("three values stored") { RestoreCycleTests.values(try await d.events(Band.id)).count == 3 }
        #expect(launcher.starts == [Self.busName], "a program already starting is not started twice")
        let registered = try await d.api(.register(Band.id, nameRule: nil, replay: true, eventLimit: nil), as: APICaller(name: ":1.51", uid: 0))
        #expect(Self.reason(registered) == LaunchReason(busName: Self.busName, identifiers: [Band.id], events: ["value-notified"]))
        // Attached: values start nothing; registering again has no reason.
        await push(d, 4)
        try await eventually("four values stored") { RestoreCycleTests.values(try await d.events(Band.id)).count == 4 }
        let again = try await d.api(.register(Band.id, nameRule: nil, replay: true, eventLimit: nil), as: APICaller(name: ":1.51", uid: 0))
        #expect(Self.reason(again) == nil && launcher.starts.count == 1)
        // Gone again: the next value starts it again.
        await d.daemon.clientLeft(":1.51")
        await push(d, 5)
        try await eventually("started a second time") { launcher.starts.count == 2 }
        await d.stop()
    }

    @Test func anEventItsSpecDoesNotWakeOnStartsNothingAndRemovingTheSpecStopsStarts() async throws {
        let (d, launcher) = try await setUp(wakeOn: ["disconnected"])
        await push(d, 1)
        try await eventually("the value stored") { RestoreCycleTests.values(try await d.events(Band.id)).count == 1 }
        #expect(launcher.starts.isEmpty)
        try await d.api(.setLaunch(Band.id, nil))
        await d.fake.dropLink(Band.band)
        try await eventually("disconnected stored") { try await d.events(Band.id).contains { $0.kind == "disconnected" } }
        #expect(launcher.starts.isEmpty, "no spec, no start")
        await d.stop()
    }

    @Test func aProgramThatNeverStartsIsTriedAtMostFiveTimesInThirtySecondsThenAfterTheWindow() async throws {
        let clock = DaemonClock.manual()
        let (d, launcher) = try await setUp(clock: clock)
        launcher.answer(.failed("org.freedesktop.DBus.Error.Spawn.ChildExited: exited with status 1"))
        await push(d, 1)
        try await eventually("five starts, then limited", advancing: clock, by: .milliseconds(250), upTo: .seconds(29)) {
            guard launcher.starts.count >= 5 else { return false }
            return try await d.daemon.statusJSON().contains("\"state\":\"limited\"")
        }
        #expect(launcher.starts.count == 5)
        let status = try await d.daemon.statusJSON()
        #expect(status.contains("\"busName\":\"org.example.Band\"") && status.contains("Spawn.ChildExited"), "\(status)")
        // Values inside the window start nothing; after it, the next value does.
        await push(d, 2)
        try await eventually("the second value stored") { RestoreCycleTests.values(try await d.events(Band.id)).count == 2 }
        #expect(launcher.starts.count == 5)
        clock.advance(by: .seconds(30))
        launcher.answer(.started)
        await push(d, 3)
        try await eventually("started after the window") { launcher.starts.count == 6 }
        await d.stop()
    }

    @Test func aSpecIsDurableAndEventsOfTheRestartStartTheProgramOnceRelinkdIsReachable() async throws {
        let (first, _) = try await setUp(wakeOn: [])
        await first.stop()
        let launcher = RecordingLauncher()
        let second = try await InProcessDaemon(fake: first.fake, directory: first.directory, launcher: launcher)
        // `restored` is committed during start-up; the start waits until relinkd is reachable.
        try await eventually("the program started for the restored link") { launcher.starts == [Self.busName] }
        let registered = try await second.api(.register(Band.id, nameRule: nil, replay: true, eventLimit: nil), as: APICaller(name: ":1.60", uid: 0))
        #expect(Self.reason(registered)?.events.contains("restored") == true)
        await second.stop()
    }

    @Test func aUserWhoCouldNotStartTheProgramIsRefused() async throws {
        let (d, launcher) = try await setUp()
        let user = APICaller(name: ":1.70", uid: 1000)
        let mine = try RestoreIdentifier("mine")
        try await d.api(.register(mine, nameRule: nil, replay: true, eventLimit: nil), as: user)
        launcher.refuse(1000, RelinkError(.notPermitted, "org.example.Band runs as user root"))
        await #expect(throws: RelinkError(.notPermitted, "org.example.Band runs as user root")) {
            try await d.daemon.checkLaunch(LaunchSpec(busName: Self.busName), for: user)
        }
        await #expect(throws: RelinkError.unknownIdentifier(named: Band.id.rawValue)) {
            try await d.api(.setLaunch(Band.id, nil), as: user)
        }
        await d.stop()
    }
}
