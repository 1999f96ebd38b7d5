import BenchSupport
import DBus
import Foundation
import Testing

/// A lock of the bench and the restore identifier that uses it: what the
/// probe and outbox helpers of ``Harness`` take (``Harness/mainLock``, the
/// bench's "lock" under ``Harness/id``, unless a test names another).
struct BenchLock: Sendable, Hashable {
    /// Its name in bench commands.
    var name: String
    var address: String
    /// The identifier whose outbox gets its values.
    var id: String
    /// Its Device1 object on the central.
    var path: ObjectPath {
        get throws { try ObjectPath("/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")) }
    }
}

/// One bench (private bus, BlueZoo, lock and band), one state directory,
/// relinkd processes started and killed on it, and a control client.
/// Everything is stopped by ``with(_:)``, also when the body throws.
final class Harness {
    static let lockAddress = "00:00:00:00:00:02"
    static let lockService = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
    static let lockState = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
    static let id = "org.example.lock"
    static let mainLock = BenchLock(name: "lock", address: lockAddress, id: id)

    let bench: Bench
    let control: ControlClient
    let directory: String
    private(set) var relinkd: RelinkdProcess?
    private var starts = 0
    /// How relinkd is launched: a command prefix (e.g. `nsenter` into a
    /// private journald's namespace) and where it logs.
    let launch: RelinkdProcess.Launch

    private init(bench: Bench, control: ControlClient, directory: String, launch: RelinkdProcess.Launch) {
        self.bench = bench
        self.control = control
        self.directory = directory
        self.launch = launch
    }

    /// Runs `body` with a fresh bench and relinkd started; stops everything.
    static func with(launch: RelinkdProcess.Launch = .init(), bench options: BenchOptions = .init(),
                     _ body: (Harness) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkd-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let bench = try await Bench.start(options)
        do {
            try await run(on: bench, directory: directory, launch: launch, body)
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
    }

    private static func run(on bench: Bench, directory: String, launch: RelinkdProcess.Launch, _ body: (Harness) async throws -> Void) async throws {
        let connection = try await Connection.connect(to: .address(bench.busAddress))
        defer { connection.close() }
        let harness = Harness(bench: bench, control: ControlClient(connection: connection), directory: directory, launch: launch)
        defer { harness.relinkd?.kill9() }
        do {
            try await harness.startRelinkd()
            try await body(harness)
            try? FileManager.default.removeItem(atPath: directory)
        } catch {
            print("relinkd log kept in \(directory)")
            throw error
        }
    }

    /// Starts relinkd on the bench and waits until it answers.
    func startRelinkd(environment: [String: String] = [:]) async throws {
        try launchRelinkd(environment: environment)
        try await control.waitUntilUp()
    }

    /// Starts relinkd on the bench without waiting for it.
    func launchRelinkd(environment: [String: String] = [:]) throws {
        starts += 1
        relinkd = try RelinkdProcess.start(bus: bench.busAddress, stateDirectory: directory + "/state",
                                           logPath: directory + "/relinkd-\(starts).log", environment: environment, launch: launch)
    }

    /// SIGTERMs relinkd; returns its exit status.
    func stopRelinkd() -> Int32 {
        let status = relinkd?.terminate() ?? -1
        relinkd = nil
        return status
    }

    /// SIGKILLs relinkd.
    func killRelinkd() {
        relinkd?.kill9()
        relinkd = nil
    }

    /// Registers, connects the lock (pending until cancelled) and subscribes
    /// to its lock state; waits until the link is up.
    func connectAndSubscribeLock() async throws {
        try await control.register(Self.id)
        try await control.connect(Self.id, Self.lockAddress, services: [Self.lockService])
        try await control.subscribe(Self.id, Self.lockAddress, Self.lockService, Self.lockState)
        try await waitForEvents("connected", count: 1)
    }

    /// Pushes distinct values from the lock, one at a time: each is in the
    /// outbox before the next is pushed (so none shares another's signal).
    func push(_ values: [UInt8], _ lock: BenchLock = Harness.mainLock) async throws {
        for value in values {
            try await bench.send(.pushValue(lock.name, hex: String(format: "%02x", value)))
            try await eventually(timeout: .seconds(20), "value \(value) of \(values) in the outbox of \(lock.id)") {
                (try? await self.notifiedValues(lock))?.contains(value) == true
            }
        }
    }

    static let lockPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")

    /// Whether bluetoothd (the bench) reports the lock connected.
    func lockConnectedOnBlueZ(_ path: ObjectPath = Harness.lockPath) async throws -> Bool {
        let reply = try await control.connection.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string("Connected")])
        guard case .variant(.boolean(let connected))? = reply.body.first else { return false }
        return connected
    }

    /// Another client (this test's own bus connection) discovers the lock
    /// and connects it: bluetoothd then knows the lock (not temporary).
    func connectLockAsAnotherClient(_ path: ObjectPath = Harness.lockPath) async throws {
        let bluez = control.connection
        let adapter = try ObjectPath("/org/bluez/hci0")
        _ = try await bluez.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", method: "StartDiscovery")
        try await eventually(timeout: .seconds(15), "a third-party Connect to succeed") {
            do {
                _ = try await bluez.call(destination: "org.bluez", path: path, interface: "org.bluez.Device1", method: "Connect")
                return true
            } catch { return false }
        }
        _ = try? await bluez.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", method: "StopDiscovery")
    }

    /// Values from this one up are probes, pushed by ``waitUntilNotificationsFlow()``.
    static let firstProbe: UInt8 = 200
    /// The next probe value of each lock (each lock's values go to its own identifier).
    private var nextProbe: [BenchLock: UInt8] = [:]

    /// The next probe value; throws once they are all used (the test then
    /// fails naming why, instead of the counter overflowing and the test
    /// process dying with every relinkd it started).
    private func takeProbe(_ lock: BenchLock) throws -> UInt8 {
        let probe = nextProbe[lock, default: Harness.firstProbe]
        guard probe < UInt8.max else {
            throw TimeoutError(what: "notifications to flow (probe values \(Harness.firstProbe)-\(UInt8.max - 1) all used)")
        }
        nextProbe[lock] = probe + 1
        return probe
    }

    /// After a reconnection: pushes probe values until one reaches the
    /// outbox (values notified before relinkd re-armed the characteristic
    /// are not delivered by BlueZ at all, so a client cannot expect them).
    /// A probe not seen within 500 ms is given up for a new one (it may
    /// have gone out before the re-arm), until `timeout`.
    func waitUntilNotificationsFlow(_ lock: BenchLock = Harness.mainLock, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let probe = try takeProbe(lock)
            try await bench.send(.pushValue(lock.name, hex: String(format: "%02x", probe)))
            do {
                try await eventually(timeout: .milliseconds(500), "probe \(probe) in the outbox of \(lock.id)") {
                    (try? await self.notifiedValues(lock))?.contains(probe) == true
                }
                return
            } catch is TimeoutError {
                continue
            }
        }
        throw TimeoutError(what: "notifications of \(lock.name) to flow again")
    }

    /// Waits until relinkd has handled everything the lock notified so
    /// far: pushes one probe and waits (bounded) until it is in the outbox.
    /// The lock's values reach relinkd in order on one bus connection and
    /// are stored in order, so by then every earlier value, and any second
    /// copy of one, is stored too. Use it before asserting the outbox's
    /// exact contents, instead of a settle sleep. Returns the probe.
    @discardableResult
    func waitUntilHandled(_ lock: BenchLock = Harness.mainLock, timeout: Duration = .seconds(20)) async throws -> UInt8 {
        let probe = try takeProbe(lock)
        try await bench.send(.pushValue(lock.name, hex: String(format: "%02x", probe)))
        try await eventually(timeout: timeout, "probe \(probe) in the outbox of \(lock.id) (everything before it handled)") {
            (try? await self.notifiedValues(lock))?.contains(probe) == true
        }
        return probe
    }

    /// Waits until relinkd's Connect to the (out-of-range) lock has failed
    /// and it looks for the lock by a scan, or backs off: its intent is
    /// loaded and pending, and it went through a failed attempt.
    func waitUntilLookingForTheLock(_ lock: BenchLock = Harness.mainLock, timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, "relinkd to try \(lock.name) and look for it by a scan") {
            let state = try? await self.control.connectionState(lock.id)
            return state == "trying-scan" || state == "backing-off"
        }
    }

    /// Waits until relinkd has tried the (out-of-range) lock with every
    /// strategy and backs off: a whole round ended without a link.
    func waitUntilBackingOff(timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, "relinkd to try the lock and back off") {
            (try? await self.control.connectionState(Self.id)) == "backing-off"
        }
    }

    /// Watches for `window` that no `kind` event beyond the first `count`
    /// comes. A real-time wait (Tests/README.md): where a test asserts that
    /// an event is not repeated (coalescing, no reconnect), only time shows it.
    func observeNoMoreEvents(_ kind: String, than count: Int, for window: Duration) async throws {
        try await observeQuietly(for: window, "no \(kind) event beyond \(count)") {
            (try? await self.events(kind).count) == count
        }
    }

    /// Waits until relinkd says it is ready: its restore from the store is
    /// done, so every stored intent it will bring back is back.
    func waitUntilReady(timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, "relinkd to be ready (restored from its store)") {
            (try? await self.control.status())?["ready"] as? Bool == true
        }
    }

    /// Every value (test values and probes alike) is in the outbox at most once.
    func expectNoDuplicates(_ lock: BenchLock = Harness.mainLock) async throws {
        let values = try await notifiedValues(lock)
        #expect(Set(values).count == values.count, "a value was delivered twice: \(values)")
    }

    /// Every notified value that is not a probe, in outbox order.
    func testValues(_ lock: BenchLock = Harness.mainLock) async throws -> [UInt8] {
        try await notifiedValues(lock).filter { $0 < Self.firstProbe }
    }

    /// Every notified value in the outbox, in order (one byte each).
    func notifiedValues(_ lock: BenchLock = Harness.mainLock) async throws -> [UInt8] {
        try await control.events(lock.id).compactMap { $0.value?.first }
    }

    func events(_ kind: String, of id: String = Harness.id) async throws -> [ControlClient.Event] {
        try await control.events(id).filter { $0.kind == kind }
    }

    /// Waits until the outbox holds at least `count` events of `kind`.
    func waitForEvents(_ kind: String, count: Int, of id: String = Harness.id, timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, "\(count) \(kind) event(s) of \(id)") {
            ((try? await self.events(kind, of: id).count) ?? 0) >= count
        }
    }
}
