import Foundation

/// An isolated simulated-Bluetooth bench for a test: its own temporary
/// directory and private D-Bus bus, a patched BlueZoo and simulated
/// peripherals (see bench/README.md).
///
/// The launcher's stdin stays open for the bench's lifetime: if the test
/// process dies, the pipe closes and the bench stops by itself.
public actor Bench {
    /// The ready line: bus address, directory, central and peripherals.
    public nonisolated let info: BenchInfo
    /// The private bus (`unix:path=...`); use it as `DBUS_SYSTEM_BUS_ADDRESS`.
    public nonisolated var busAddress: String { info.bus }
    /// The bench's temporary directory (removed by `stop()`).
    public nonisolated var directory: String { info.dir }
    /// The launcher's process id.
    public nonisolated let pid: Int32

    private let process: Process
    private let stdin: FileHandle
    private let channel: BenchChannel
    private let commandTimeout: Duration
    private var stopped = false

    private init(info: BenchInfo, process: Process, stdin: FileHandle, channel: BenchChannel,
                 commandTimeout: Duration) {
        self.info = info
        self.pid = process.processIdentifier
        self.process = process
        self.stdin = stdin
        self.channel = channel
        self.commandTimeout = commandTimeout
    }

    /// `bench/run-bench` of this checkout, or `$RELINK_BENCH_LAUNCHER`.
    public static func launcherPath(file: String = #filePath) -> String {
        if let path = ProcessInfo.processInfo.environment["RELINK_BENCH_LAUNCHER"] { return path }
        return URL(fileURLWithPath: file)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("bench/run-bench").path
    }

    /// Starts a bench and waits for its ready line.
    /// - Throws: `BenchError.launcherNotFound`, `.startFailed` (the launcher
    ///   reported an error or exited), `.timedOut` (no ready line in
    ///   `options.startTimeout`; the launcher is then stopped).
    public static func start(_ options: BenchOptions = BenchOptions()) async throws -> Bench {
        let launcher = options.launcher ?? launcherPath()
        guard FileManager.default.isExecutableFile(atPath: launcher) else {
            throw BenchError.launcherNotFound(launcher)
        }
        // A write to a bench that died must fail with EPIPE, not kill the test.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher)
        process.arguments = options.arguments
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = nil
        process.environment = env
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let channel = BenchChannel()
        let lines = LineStream(reading: output.fileHandleForReading)
        Task {
            for await line in lines.lines { await channel.deliver(line) }
            await channel.closed()
        }
        do {
            try process.run()
        } catch {
            throw BenchError.startFailed("cannot run \(launcher): \(error)")
        }
        do {
            let info = try await channel.waitReady(timeout: options.startTimeout)
            return Bench(info: info, process: process, stdin: input.fileHandleForWriting,
                         channel: channel, commandTimeout: options.commandTimeout)
        } catch {
            try? input.fileHandleForWriting.close()
            await Self.terminate(process)
            throw error
        }
    }

    /// The ready-line entry of a peripheral, by name.
    public nonisolated func peripheral(_ name: String) -> BenchInfo.Peripheral? {
        info.peripherals[name]
    }

    /// Sends a command and waits for its reply.
    /// - Throws: `BenchError.commandFailed` (the bench answered ok=false),
    ///   `.timedOut`, `.notRunning`.
    @discardableResult
    public func send(_ command: BenchCommand) async throws -> BenchReply {
        guard !stopped else { throw BenchError.notRunning }
        let handle = stdin
        return try await channel.request(command, timeout: commandTimeout) { line in
            try handle.write(contentsOf: line)
        }
    }

    // Typed shortcuts (each throws what `send` throws).
    @discardableResult public func ping() async throws -> BenchReply { try await send(.ping) }
    @discardableResult public func status() async throws -> BenchReply { try await send(.status) }
    @discardableResult public func outOfRange(_ p: String) async throws -> BenchReply { try await send(.outOfRange(p)) }
    @discardableResult public func inRange(_ p: String) async throws -> BenchReply { try await send(.inRange(p)) }
    @discardableResult public func setAdvName(_ p: String, _ name: String) async throws -> BenchReply {
        try await send(.setAdvName(p, name))
    }
    @discardableResult public func setGapName(_ p: String, _ name: String) async throws -> BenchReply {
        try await send(.setGapName(p, name))
    }
    @discardableResult public func push(_ p: String, state: String? = nil) async throws -> BenchReply {
        try await send(.push(p, state: state))
    }
    @discardableResult public func startStream(_ p: String, rate: Double? = nil) async throws -> BenchReply {
        try await send(.startStream(p, rate: rate))
    }
    @discardableResult public func stopStream(_ p: String) async throws -> BenchReply { try await send(.stopStream(p)) }
    @discardableResult public func setRate(_ p: String, _ rate: Double) async throws -> BenchReply {
        try await send(.setRate(p, rate))
    }
    @discardableResult public func setRSSI(_ p: String, _ rssi: Int, noise: Int = 0) async throws -> BenchReply {
        try await send(.setRSSI(p, rssi, noise: noise))
    }
    /// Patch 26: what the peripheral demands of the central's agent to pair.
    @discardableResult public func setPairingMethod(_ p: String, _ method: String, passkey: Int = 0) async throws -> BenchReply {
        try await send(.setPairingMethod(p, method, passkey: passkey))
    }
    @discardableResult public func get(_ p: String) async throws -> BenchReply { try await send(.get(p)) }
    @discardableResult public func restartBlueZ() async throws -> BenchReply { try await send(.restartBlueZ) }
    @discardableResult public func centralPower(_ on: Bool) async throws -> BenchReply { try await send(.centralPower(on)) }
    @discardableResult public func powerCycleCentral(offSeconds: Double = 0.2) async throws -> BenchReply {
        try await send(.powerCycleCentral(offSeconds: offSeconds))
    }
    @discardableResult public func killPeripheral(_ p: String) async throws -> BenchReply { try await send(.killPeripheral(p)) }
    @discardableResult public func startPeripheral(_ p: String) async throws -> BenchReply { try await send(.startPeripheral(p)) }

    /// Stops the bench and waits until the launcher has exited (it stops
    /// everything it started and removes its directory first). Closes stdin
    /// and sends SIGTERM at once: stdin EOF alone may never come while some
    /// other process spawned meanwhile by the test run holds an inherited
    /// copy of the pipe; SIGKILL after 20 s.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        try? stdin.close()
        process.terminate()
        if await Self.waitExit(process, within: .seconds(20)) { return }
        kill(process.processIdentifier, SIGKILL)
        _ = await Self.waitExit(process, within: .seconds(5))
    }

    private static func terminate(_ process: Process, grace: Duration = .seconds(5)) async {
        if await waitExit(process, within: grace) { return }
        process.terminate()
        if await waitExit(process, within: .seconds(5)) { return }
        kill(process.processIdentifier, SIGKILL)
        _ = await waitExit(process, within: .seconds(5))
    }

    private static func waitExit(_ process: Process, within: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: within)
        while process.isRunning {
            if clock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}
