import ArgumentParser
import RelinkClient

/// `relinkctl unsubscribe ID PERIPHERAL SERVICE CHAR`.
struct UnsubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unsubscribe", abstract: "End a subscription.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    /// Calls `Central1.Unsubscribe` and prints what was unsubscribed.
    func run() async throws {
        try await global.withManager(identifier: target.identifier) { manager in
            try await manager.unsubscribe(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
        }
        if global.json { Output.json(target.json.merging(["subscribed": false]) { $1 }) } else { Output.line("\(target.identifier): unsubscribed \(target.characteristic)") }
    }
}
