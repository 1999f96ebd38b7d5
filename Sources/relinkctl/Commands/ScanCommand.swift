import ArgumentParser
import RelinkClient

/// `relinkctl scan ID UUID... [--allow-duplicates]`.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "Start (or replace) an identifier's durable scan.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "Service UUIDs to scan for (none: every peripheral).") var services: [String] = []
    @Flag(name: .customLong("allow-duplicates"), help: "Report every advertisement.") var allowDuplicates = false

    /// The services in the 128-bit form relinkd takes.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): a bad UUID, or
    ///   more than the contract allows.
    func uuids() throws(RelinkClientError) -> [String] { try RelinkArguments.bluetoothUUIDs(services) }

    /// Checks the services before relinkd is called (see ``uuids()``).
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try uuids() }
    }

    /// Calls `Central1.Scan` (replacing the identifier's scan).
    func run() async throws {
        let (identifier, uuids, allowDuplicates) = (target.identifier, try uuids(), allowDuplicates)
        try await global.withManager(identifier: identifier) { manager in
            try await manager.scan(identifier, services: uuids, options: .init(allowDuplicates: allowDuplicates))
        }
        if global.json {
            Output.json(["identifier": identifier, "scanning": true, "services": uuids, "allow_duplicates": allowDuplicates])
        } else {
            Output.line("\(identifier): scanning\(uuids.isEmpty ? "" : " for " + uuids.joined(separator: " "))")
        }
    }
}
