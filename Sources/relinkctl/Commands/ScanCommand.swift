import RelinkAPI
import ArgumentParser
import RelinkClient

/// `relinkctl scan ID UUID... [--allow-duplicates]`.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "Start (or replace) an identifier's durable scan.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "Service UUIDs to scan for (none: every peripheral).") var services: [String] = []
    @Flag(name: .customLong("allow-duplicates"), help: "Report every advertisement.") var allowDuplicates = false

    func run() async throws {
        _ = try APIPath.central(for: identifier)
        let uuids = try RelinkArguments.bluetoothUUIDs(services)
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.scan(identifier, services: uuids, options: .init(allowDuplicates: allowDuplicates))
        if global.json {
            Output.json(["identifier": identifier, "scanning": true, "services": uuids, "allow_duplicates": allowDuplicates])
        } else {
            Output.line("\(identifier): scanning\(uuids.isEmpty ? "" : " for " + uuids.joined(separator: " "))")
        }
    }
}
