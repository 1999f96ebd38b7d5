import RelinkAPI
import ArgumentParser
import RelinkClient
import RelinkModel

/// `relinkctl cancel ID PERIPHERAL`.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "End a connection intent and its subscriptions.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "An address or a peripheral UUID.") var peripheral: String

    func run() async throws {
        _ = try APIPath.central(for: identifier)
        _ = try RelinkArguments.peripheral(peripheral)
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.cancel(identifier, peripheral: peripheral)
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "cancelled": true]) } else { Output.line("\(identifier): cancelled \(peripheral)") }
    }
}
