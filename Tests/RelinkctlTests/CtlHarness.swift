import BenchSupport
import Foundation
import RelinkClient
import Testing

/// One bench (private bus, BlueZoo, lock and band), a state directory and
/// relinkd run on it as its own process; relinkctl runs against it.
/// ``with(startRelinkd:_:)`` stops everything, also when the body throws.
final class CtlHarness {
    static let lockAddress = "00:00:00:00:00:02"
    static let lockService = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
    static let lockState = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
    static let lockCommand = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"

    let bench: Bench
    let directory: String
    private(set) var relinkd: RelinkdProcess?
    private var starts = 0
    /// More arguments for every relinkd start (e.g. `--config FILE`).
    var relinkdArguments: [String] = []

    private init(bench: Bench, directory: String) {
        self.bench = bench
        self.directory = directory
    }

    var bus: String { bench.busAddress }

    /// Runs `body` with a fresh bench (and relinkd unless told not to); stops everything.
    static func with(startRelinkd: Bool = true, relinkdArguments: [String] = [], _ body: (CtlHarness) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relinkctl-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let bench = try await Bench.start()
        let harness = CtlHarness(bench: bench, directory: directory)
        harness.relinkdArguments = relinkdArguments
        do {
            if startRelinkd { try await harness.startRelinkd() }
            try await body(harness)
        } catch {
            harness.relinkd?.kill9()
            print("relinkd log kept in \(directory)")
            await bench.stop()
            throw error
        }
        harness.relinkd?.kill9()
        await bench.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts relinkd and waits until Manager1 answers.
    func startRelinkd() async throws {
        starts += 1
        relinkd = try RelinkdProcess.start(bus: bus, stateDirectory: directory + "/state", logPath: directory + "/relinkd-\(starts).log",
                                           extraArguments: relinkdArguments)
        try await eventually(timeout: .seconds(30), "relinkd's Manager1 to answer") {
            guard let manager = try? await RelinkManager.connect(to: .address(self.bus), timeout: .seconds(2)) else { return false }
            defer { manager.close() }
            return (try? await manager.managerProperties()) != nil
        }
    }

    /// SIGKILLs relinkd.
    func killRelinkd() {
        relinkd?.kill9()
        relinkd = nil
    }

    /// `relinkctl --bus-address BUS arguments...`
    func ctl(_ arguments: String...) async throws -> CtlResult {
        try await ctl(arguments)
    }

    func ctl(_ arguments: [String]) async throws -> CtlResult {
        try await CtlProcess.run(["--bus-address", bus] + arguments)
    }

    /// Like ``ctl(_:)`` but expects exit 0.
    @discardableResult
    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> CtlResult {
        let result = try await CtlProcess.run(["--bus-address", bus] + arguments)
        #expect(result.status == 0, "relinkctl \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// The stored events of `identifier` (through relinkctl --json).
    func events(_ identifier: String) async throws -> [[String: Any]] {
        let result = try await ctl("--json", "events", identifier)
        guard result.status == 0 else { throw CtlError("events: \(result)") }
        return try result.jsonObject()["events"] as? [[String: Any]] ?? []
    }

    /// Waits until `identifier` has stored at least `count` events of `kind`.
    func waitForEvents(_ identifier: String, kind: String, count: Int = 1, timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, "\(count) \(kind) event(s) of \(identifier)") {
            let events = (try? await self.events(identifier)) ?? []
            return events.filter { $0["kind"] as? String == kind }.count >= count
        }
    }

    /// Registers `identifier` with relinkctl, connects it to the bench's
    /// lock by its service, and waits for its `connected` event.
    func registerAndConnectLock(_ identifier: String) async throws {
        try await ok("register", identifier)
        try await ok("connect", identifier, Self.lockAddress, "--service", Self.lockService)
        try await waitForEvents(identifier, kind: "connected")
    }

    /// Pushes one lock-state value from the lock.
    func push(_ value: UInt8) async throws {
        try await bench.send(.pushValue("lock", hex: String(format: "%02x", value)))
    }

    /// Pushes `value` from the lock every 100 ms, at most `times` times,
    /// until the task is cancelled: for a test that reads events from a
    /// stream, a probe that shows the lock's notifications are armed once
    /// the value arrives (a value pushed before that is never stored).
    func prober(_ value: UInt8, times: Int = 200) -> Task<Void, Never> {
        let bench = bench
        return Task {
            for _ in 0..<times where !Task.isCancelled {
                _ = try? await bench.send(.pushValue("lock", hex: String(format: "%02x", value)))
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Pushes `value` from the lock, again every 100 ms, until `follower`
    /// prints it (at most `timeout`): then the lock's notifications are
    /// armed and the follower is watching. A bounded wait instead of a
    /// fixed settle time.
    func pushUntilPrinted(_ value: UInt8, by follower: CtlFollower, timeout: Duration = .seconds(20)) async throws {
        try await eventually(timeout: timeout, "value \(value) to be printed by the follower") {
            // A JSON line (`--json`), or a line for people ending with the value's hex.
            let hex = String(value, radix: 16).count == 1 ? "0" + String(value, radix: 16) : String(value, radix: 16)
            if follower.output.lines.contains(where: { $0.contains("\"value\":[\(value)]") || ($0.contains(" value-notified ") && $0.hasSuffix(" " + hex)) }) {
                return true
            }
            try? await self.push(value)
            return false
        }
    }
}
