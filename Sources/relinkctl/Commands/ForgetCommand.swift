import RelinkAPI
import ArgumentParser
import RelinkClient

/// `relinkctl forget ID`: Manager1.Unregister.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "forget", abstract: "Delete an identifier with its intents, subscriptions and events.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The restore identifier.") var identifier: String

    func run() async throws {
        _ = try APIPath.central(for: identifier)
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.unregister(identifier)
        if global.json { Output.json(["identifier": identifier, "forgotten": true]) } else { Output.line("\(identifier): forgotten") }
    }
}
