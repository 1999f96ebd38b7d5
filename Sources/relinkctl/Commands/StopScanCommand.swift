import ArgumentParser
import RelinkClient

/// `relinkctl stop-scan ID`.
struct StopScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stop-scan", abstract: "Stop an identifier's scan.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument

    /// Calls `Central1.StopScan`.
    func run() async throws {
        let identifier = target.identifier
        try await global.withManager(identifier: identifier) { manager in try await manager.stopScan(identifier) }
        if global.json { Output.json(["identifier": identifier, "scanning": false]) } else { Output.line("\(identifier): scan stopped") }
    }
}
