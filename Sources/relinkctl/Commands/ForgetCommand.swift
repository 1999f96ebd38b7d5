import ArgumentParser
import RelinkClient

/// `relinkctl forget ID`: Manager1.Unregister.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "forget", abstract: "Delete an identifier with its intents, subscriptions and events.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument

    /// Calls `Manager1.Unregister`.
    func run() async throws {
        let identifier = target.identifier
        try await global.withManager(identifier: identifier) { manager in try await manager.unregister(identifier) }
        if global.json { Output.json(["identifier": identifier, "forgotten": true]) } else { Output.line("\(identifier): forgotten") }
    }
}
