import ArgumentParser
import Logging
import RelinkStore
import RelinkStoreTorture

/// Applies the seeded torture stream from mutation `start` on, printing
/// `ready` once the store is open and `ack <i>` after mutation i committed.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Apply the seeded mutation stream, acknowledging each commit on stdout.")

    @Option(help: "State directory.") var directory: String
    @Option(help: "Seed of the mutation stream.") var seed: UInt64
    @Option(help: "Index of the first mutation to apply (mutations before it are already stored).") var start: Int = 0
    @Option(help: "How many mutations to apply.") var count: Int = 1_000_000

    func run() async throws {
        var workload = TortureWorkload(seed: seed)
        workload.advance(to: start)
        let store = try RelinkStore(directory: directory, policy: .refuse, logger: Logger(label: "relink.store.torture"))
        emit("ready")
        for index in start..<(start + count) {
            let mutations = workload.step()
            try await store.apply(mutations)
            emit("ack \(index)")
        }
        try store.close()
    }
}
