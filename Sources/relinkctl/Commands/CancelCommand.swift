import ArgumentParser
import RelinkClient

/// `relinkctl cancel ID PERIPHERAL`.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "End a connection intent and its subscriptions.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments

    /// Calls `Central1.Cancel`.
    func run() async throws {
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        try await global.withManager(identifier: identifier) { manager in
            try await manager.cancel(identifier, peripheral: peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "cancelled": true]) } else { Output.line("\(identifier): cancelled \(peripheral)") }
    }
}
