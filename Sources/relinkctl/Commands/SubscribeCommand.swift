import ArgumentParser
import RelinkClient

/// `relinkctl subscribe ID PERIPHERAL SERVICE CHAR`.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "subscribe", abstract: "Subscribe durably to a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    /// Calls `Central1.Subscribe` and prints what was subscribed.
    func run() async throws {
        try await global.withManager(identifier: target.identifier) { manager in
            try await manager.subscribe(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
        }
        if global.json { Output.json(target.json.merging(["subscribed": true]) { $1 }) } else { Output.line("\(target.identifier): subscribed \(target.characteristic)") }
    }
}
