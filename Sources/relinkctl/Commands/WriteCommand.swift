import RelinkAPI
import ArgumentParser
import RelinkClient

/// `relinkctl write ID PERIPHERAL SERVICE CHAR HEX [--without-response]`.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Write a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments
    @Argument(help: "The value, hex (e.g. 01ff).") var hex: String
    @Flag(name: .customLong("without-response"), help: "Write without response.") var withoutResponse = false

    func run() async throws {
        try target.check()
        let value = try RelinkArguments.hexBytes(hex)
        try RelinkArguments.checkValue(value)
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.write(target.identifier, peripheral: target.peripheral, service: target.service,
                                characteristic: target.characteristic, value: value, withResponse: !withoutResponse)
        if global.json {
            Output.json(target.json.merging(["written": RelinkArguments.hex(value)]) { $1 })
        } else {
            Output.line("\(target.identifier): wrote \(value.count) byte(s)")
        }
    }
}
