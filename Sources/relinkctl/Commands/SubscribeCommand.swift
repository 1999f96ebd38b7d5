import ArgumentParser
import RelinkClient

/// `relinkctl subscribe ID PERIPHERAL SERVICE CHAR`.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "subscribe", abstract: "Subscribe durably to a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    /// Calls `Central1.Subscribe` and prints what was subscribed.
    func run() async throws {
        let connected = try await global.withManager(identifier: target.identifier) { manager in
            try await manager.subscribe(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
            return try? await Self.hasConnectionIntent(manager, target.identifier, for: target.peripheral)
        }
        if global.json { Output.json(target.json.merging(["subscribed": true]) { $1 }) } else {
            Output.line("\(target.identifier): subscribed \(target.characteristic)")
            // A subscription alone links nothing: say so, rather than succeed into silence.
            if connected == false {
                Output.line("\(target.identifier): no connection intent for \(target.peripheral): values come only while a link to it is up "
                            + "(`relinkctl connect \(target.identifier) \(target.peripheral)` keeps one)")
            }
        }
    }

    /// Whether `identifier` has a connection intent for `peripheral` (an
    /// address or a peripheral UUID), from relinkd's `Status`.
    static func hasConnectionIntent(_ manager: RelinkManager, _ identifier: String, for peripheral: String) async throws -> Bool {
        let entry = try StatusCommand.entry(of: identifier, in: try await manager.managerProperties())
        return (entry?.connections ?? []).contains { c in
            c.address?.caseInsensitiveCompare(peripheral) == .orderedSame || c.peripheral.caseInsensitiveCompare(peripheral) == .orderedSame
        }
    }
}
