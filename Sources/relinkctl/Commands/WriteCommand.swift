import ArgumentParser
import RelinkClient

/// `relinkctl write ID PERIPHERAL SERVICE CHAR HEX [--without-response]`.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Write a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments
    @Argument(help: "The value, hex (e.g. 01ff).") var hex: String
    @Flag(name: .customLong("without-response"), help: "Write without response.") var withoutResponse = false

    /// The bytes to write.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): not hex, or
    ///   longer than the contract's limit.
    func value() throws(RelinkClientError) -> [UInt8] {
        let value = try RelinkArguments.hexBytes(hex)
        try RelinkArguments.checkValue(value)
        return value
    }

    /// Checks the value before relinkd is called (see ``value()``).
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try value() }
    }

    /// Calls `Central1.Write` with the value (with or without response).
    func run() async throws {
        let value = try value()
        try await global.withManager(identifier: target.identifier) { manager in
            try await manager.write(target.identifier, peripheral: target.peripheral, service: target.service,
                                    characteristic: target.characteristic, value: value, withResponse: !withoutResponse)
        }
        if global.json {
            Output.json(target.json.merging(["written": RelinkArguments.hex(value)]) { $1 })
        } else {
            Output.line("\(target.identifier): wrote \(value.count) byte(s)")
        }
    }
}
