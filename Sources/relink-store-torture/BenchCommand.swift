import ArgumentParser
import Foundation
import Logging
import RelinkStore

/// The restore-store benchmark: open-and-load time of a full population,
/// acknowledged (durable) mutations per second from concurrent clients, and
/// the disk's own fdatasync rate in the same directory.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Benchmark the restore store.")

    @Option(help: "Empty directory on the disk to measure (a state directory is made inside).") var directory: String
    @Option(help: "Restore identifiers.") var identifiers: Int = 1000
    @Option(help: "Peripherals (each with a connection intent and a subscription) per identifier.") var perIdentifier: Int = 10
    @Option(help: "Outbox events per identifier.") var events: Int = 10
    @Option(help: "Open-and-load repetitions.") var loads: Int = 20
    @Option(help: "Concurrent client counts to measure, comma separated.") var clients: String = "1,8,64"
    @Option(help: "Seconds per write measurement.") var seconds: Double = 3
    @Flag(help: "Reuse the population already in the directory (from an earlier run).") var reuse = false

    func run() async throws {
        let logger = Logger(label: "relink.store.bench")
        let clock = ContinuousClock()
        let state = directory + "/state"
        print("## restore store benchmark")
        print("population: \(identifiers) identifiers, \(identifiers * perIdentifier) peripherals, \(identifiers * perIdentifier) connection intents, \(identifiers * perIdentifier) subscriptions, \(identifiers * events) outbox events")

        if !reuse {
            let fillStart = clock.now
            let store = try RelinkStore(directory: state, logger: logger)
            try await BenchPopulation(identifiers: identifiers, perIdentifier: perIdentifier, eventsPerIdentifier: events).fill(store)
            try store.close()
            print("populate: \(clock.now - fillStart)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: state + "/" + RelinkStore.databaseFileName)[.size] as? Int) ?? 0
        print("database size: \(size / 1024) KiB")

        var samples: [Duration] = []
        var cpuSamples: [Duration] = []
        var openSamples: [Duration] = []
        var openCPUSamples: [Duration] = []
        var loaded: StoredState?
        for _ in 0..<loads {
            let start = clock.now
            let cpuStart = Self.processCPUTime()
            let reopened = try RelinkStore(directory: state, policy: .refuse, logger: logger)
            openSamples.append(clock.now - start)
            openCPUSamples.append(Self.processCPUTime() - cpuStart)
            loaded = try await reopened.loadState()
            samples.append(clock.now - start)
            cpuSamples.append(Self.processCPUTime() - cpuStart)
            try reopened.close()
        }
        samples.sort()
        cpuSamples.sort()
        openSamples.sort()
        openCPUSamples.sort()
        print("open (header and schema checks, then quick_check on one reader while the state loads on two others): median \(Self.ms(openSamples[openSamples.count / 2])) ms, CPU median \(Self.ms(openCPUSamples[openCPUSamples.count / 2])) ms")
        print("open+load CPU time of the process: median \(Self.ms(cpuSamples[cpuSamples.count / 2])) ms, min \(Self.ms(cpuSamples[0])) ms")
        print("load average while measuring: \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?") on \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let counts = loaded.map { ($0.identifiers.count, $0.peripherals.count, $0.identifiers.reduce(0) { $0 + $1.subscriptions.count }) }
        print("open+load (\(loads) runs, warm page cache): median \(Self.ms(samples[samples.count / 2])) ms, min \(Self.ms(samples[0])) ms, max \(Self.ms(samples[samples.count - 1])) ms; loaded \(counts.map { "\($0.0) identifiers, \($0.1) peripherals, \($0.2) subscriptions" } ?? "-")")

        let fsyncRate = try FsyncProbe(directory: directory).rate(seconds: seconds)
        print("disk: append 4 KiB + fdatasync: \(Int(fsyncRate)) /s")

        let writer = try RelinkStore(directory: state, policy: .refuse, logger: logger)
        for count in clients.split(separator: ",").compactMap({ Int($0) }) {
            let result = try await WriteLoad(store: writer, clients: count, seconds: seconds).run()
            print("clients \(count): \(Int(result.rate)) acknowledged mutations/s (each: event append + connection-intent update), latency p50 \(Self.ms(result.p50)) ms, p99 \(Self.ms(result.p99)) ms, \(String(format: "%.2f", result.rate / fsyncRate))x the fdatasync rate")
        }
        try writer.close()
    }

    static func processCPUTime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }

    static func ms(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.2f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}
