import BenchSupport
import BlueZ
import BlueZFake
import DBus
import Foundation
import InMemoryLogging
import Logging
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import RelinkStore
import Restoration
import Testing

/// relinkd's daemon in this process, on a real store in a temporary
/// directory, with the fake bluetoothd behind its BlueZ port: no bus, no
/// child process. A restart stops the daemon and starts a new one on the
/// same store and the same fake (whose links survive, as BlueZ's do).
final class InProcessDaemon: Sendable {
    let fake: FakeBlueZ
    let directory: String
    let daemon: Daemon
    let store: RelinkStore
    let task: Task<Void, any Error>

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("relink-inprocess-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Starts a daemon and waits until it is ready (restored from the store).
    /// `clock`: the daemon's timers' clock (``DaemonClock/manual()`` to move
    /// time by hand). `journal`: where the daemon logs, at info level (a
    /// test reads what an operator would); otherwise nowhere.
    init(fake: FakeBlueZ, directory: String, clock: DaemonClock = .continuous, launcher: (any ProgramLauncher)? = nil,
         bounds: UserBounds = .defaults, journal: InMemoryLogHandler? = nil) async throws {
        self.fake = fake
        self.directory = directory
        var logger = journal.map { handler in Logger(label: "relinkd.inprocess") { _ in handler } } ?? Logger(label: "relinkd.inprocess")
        logger.logLevel = journal != nil ? .info : ProcessInfo.processInfo.environment["RELINK_TEST_LOG"] == "1" ? .debug : .critical
        store = try RelinkStore(directory: directory, logger: logger)
        daemon = try Daemon(bluez: fake, store: store, adapter: "hci0", logger: logger, clock: clock, launcher: launcher, bounds: bounds)
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let daemon = self.daemon
        task = Task {
            defer { readyContinuation.finish() }  // a daemon that fails to start ends the wait too
            async let bluetoothd: Void = fake.run()
            try await daemon.run(onReady: { _ in readyContinuation.yield() })
            try await bluetoothd
        }
        for await _ in ready { break }
        guard await daemon.isReady else {
            let failure: String
            do { try await task.value; failure = "it stopped" } catch { failure = "\(error)" }
            try? store.close()
            throw InProcessError.didNotStart(failure)
        }
    }

    /// Why the harness could not go on.
    enum InProcessError: Error { case didNotStart(String) }

    /// Stops the daemon (as SIGTERM would: the loop ends, the store closes).
    func stop() async {
        task.cancel()
        _ = try? await task.value
        await fake.clientLeftBus()
        try? store.close()
    }

    @discardableResult
    func submit(_ request: ControlRequest) async throws -> [DBusValue] {
        switch await daemon.submit(request) {
        case .success(let values): return values
        case .failure(let error): throw error
        }
    }

    /// The identifier's stored events as (kind, payload).
    func events(_ id: RestoreIdentifier) async throws -> [(kind: String, payload: RelinkEvent?)] {
        try await daemon.storedEvents(id, after: 0, limit: 1000).map { event in
            (event.kind, EventKind(rawValue: event.kind).flatMap { try? RelinkEvent(kind: $0, json: event.payload) })
        }
    }

    /// A client API call as `caller` (root unless given).
    @discardableResult
    func api(_ request: APIRequest, as caller: APICaller = APICaller(name: ":1.100", uid: 0)) async throws -> APIResult {
        try await daemon.submit(request, from: caller).get()
    }

    /// The state name `Status` gives the identifier's intent for `address`.
    func state(_ id: RestoreIdentifier, _ address: BluetoothAddress) async -> String? {
        guard let peripheral = await daemon.peripheralID(for: address) else { return nil }
        return await daemon.core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)].map { Daemon.stateName($0.state) }
    }
}

/// BenchSupport's bounded wait, polled every millisecond: the daemon
/// in-process answers in microseconds. The bound is generous (30 s) because
/// `swift test` runs every suite at once: on two loaded cores a condition
/// that takes milliseconds alone once took more than 10 s (a transfer
/// shrinking its chunks a dozen times, TransferLengthTests); a bound only
/// costs time when the test fails.
func eventually(_ what: String, within bound: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws {
    try await BenchSupport.eventually(timeout: bound, poll: .milliseconds(1), what, condition)
}

/// Moves a manual clock forward by `step` at each poll until `condition`
/// holds, at most `simulated` of clock time: timers of seconds (GATT grace,
/// backoffs) pass in milliseconds, in order, each poll giving the daemon
/// time to act on what woke.
func eventually(_ what: String, advancing clock: DaemonClock, by step: Duration = .milliseconds(100),
                upTo simulated: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
    var elapsed = Duration.zero
    // 60 s of real time: each step is a poll of the loaded test process (in
    // a full parallel run one such wait took more than 30 s, session 15).
    try await eventually(what, within: .seconds(60)) {
        if try await condition() { return true }
        guard elapsed < simulated else { throw TimedOutOnClock(what: what, simulated: simulated) }
        clock.advance(by: step)
        elapsed += step
        return false
    }
}

/// ``eventually(_:advancing:by:upTo:_:)`` ran out of clock time.
struct TimedOutOnClock: Error, CustomStringConvertible {
    var what: String
    var simulated: Duration
    var description: String { "\(what) did not happen within \(simulated) of clock time" }
}
