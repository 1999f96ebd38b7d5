import ArgumentParser
import RelinkClient

/// `relinkctl list`: the identifiers the caller may see.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the restore identifiers you may see.")
    @OptionGroup var global: GlobalOptions

    /// Calls `Manager1.ListIdentifiers` and prints one identifier per line.
    func run() async throws {
        let ids = try await global.withManager { manager in try await manager.listIdentifiers() }
        if global.json {
            Output.json(ids.map { ["identifier": $0.identifier, "object": $0.object] })
        } else {
            for entry in ids { Output.line("\(entry.identifier)\t\(entry.object)") }
        }
    }
}
