import ArgumentParser
import RelinkClient
import RelinkModel

/// `relinkctl scan ID UUID... [--allow-duplicates] [--manufacturer-data C:HEX[/MASK]]... [--service-data U:HEX[/MASK]]...`.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "Start (or replace) an identifier's durable scan.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "Service UUIDs to scan for (none: every peripheral).") var services: [String] = []
    @Flag(name: .customLong("allow-duplicates"), help: "Report every advertisement.") var allowDuplicates = false
    @Option(name: .customLong("manufacturer-data"),
            help: "Only peripherals whose manufacturer data of company C starts with HEX (under MASK): C:HEX[/MASK], e.g. 0x004c:0215 (repeatable; any one matches).")
    var manufacturerData: [String] = []
    @Option(name: .customLong("service-data"),
            help: "Only peripherals whose service data of UUID starts with HEX (under MASK): UUID:HEX[/MASK], e.g. feaa:20 (repeatable; any one matches).")
    var serviceData: [String] = []

    /// The data prefixes, by the model's parser.
    func prefixes() throws(RelinkClientError) -> Set<AdvertisingDataPrefix> {
        try RelinkArguments.dataPrefixes(manufacturer: manufacturerData, service: serviceData)
    }

    /// The services in the 128-bit form relinkd takes.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): a bad UUID, or
    ///   more than the contract allows.
    func uuids() throws(RelinkClientError) -> [String] { try RelinkArguments.bluetoothUUIDs(services) }

    /// Checks the services before relinkd is called (see ``uuids()``).
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try uuids(); _ = try prefixes() }
    }

    /// Calls `Central1.Scan` (replacing the identifier's scan).
    func run() async throws {
        let (identifier, uuids, allowDuplicates, prefixes) = (target.identifier, try uuids(), allowDuplicates, try prefixes())
        try await global.withManager(identifier: identifier) { manager in
            try await manager.scan(identifier, services: uuids, options: .init(allowDuplicates: allowDuplicates, dataPrefixes: prefixes))
        }
        if global.json {
            Output.json(["identifier": identifier, "scanning": true, "services": uuids, "allowDuplicates": allowDuplicates,
                         "dataPrefixes": prefixes.sorted().map(\.text)])
        } else {
            Output.line("\(identifier): scanning\(uuids.isEmpty ? "" : " for " + uuids.joined(separator: " "))")
        }
    }
}
