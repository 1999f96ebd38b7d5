import ArgumentParser
import Restoration

@main
struct Relinkctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relinkctl",
        abstract: "Drive and inspect relinkd: restore identifiers, scans, connections, subscriptions and events.",
        version: RelinkVersion.string)

    func run() async throws {
        throw ValidationError("relinkctl's commands are not implemented yet (see the README's status section)")
    }
}
