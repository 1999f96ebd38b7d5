import ArgumentParser
import RelinkClient

/// `relinkctl pair ID PERIPHERAL`.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with (bond to) a connected peripheral of a connection intent, Just Works, and trust it.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments

    /// Calls `Central1.Pair`.
    func run() async throws {
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        try await global.withManager(identifier: identifier) { manager in
            try await manager.pair(identifier, peripheral: peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "paired": true]) } else { Output.line("\(identifier): paired and trusted \(peripheral)") }
    }
}
