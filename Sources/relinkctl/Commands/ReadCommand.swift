import ArgumentParser
import RelinkClient

/// `relinkctl read ID PERIPHERAL SERVICE CHAR`: prints the value in hex
/// (and as text when printable).
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Read a characteristic (hex on stdout, and the text when printable; --json: hex only).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    /// Calls `Central1.Read` and prints the value in hex.
    func run() async throws {
        let value = try await global.withManager(identifier: target.identifier) { manager in
            try await manager.read(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
        }
        if global.json { Output.json(target.json.merging(["value": RelinkArguments.hex(value)]) { $1 }) } else { Output.line(ValueText.line(value)) }
    }
}
