import ArgumentParser

/// Crash-test writer and benchmark for the restore store.
@main
struct RelinkStoreTortureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relink-store-torture",
        abstract: "Drive the restore store: a crash-test writer, an open probe, and a benchmark.",
        subcommands: [WriteCommand.self, OpenCommand.self, BenchCommand.self])
}
