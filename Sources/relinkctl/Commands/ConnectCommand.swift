import RelinkAPI
import ArgumentParser
import RelinkClient
import RelinkModel

/// `relinkctl connect ID PERIPHERAL [--timeout S] [--service UUID]... [--strategy S]... [--match-…]`.
struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "connect", abstract: "Add a durable connection intent.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "An address AA:BB:CC:DD:EE:FF or a peripheral UUID.") var peripheral: String
    @Option(help: "Give up after this many seconds (default: pending until cancelled).") var timeout: Double?
    @Option(name: .customLong("service"), help: "A service UUID the peripheral exposes (repeatable).") var services: [String] = []
    @Option(name: .customLong("strategy"), help: "known-identifier, already-connected or scan (repeatable, in order).") var strategies: [String] = []
    @Option(name: .customLong("address-type"), help: "public or random.") var addressType: String?
    @Option(name: .customLong("match-name"), help: "If its address changes: its exact advertised name.") var matchName: String?
    @Option(name: .customLong("match-manufacturer-id"), help: "If its address changes: a company ID in its manufacturer data (0 to 65535).") var matchManufacturerID: UInt16?
    @Option(name: .customLong("match-service"), help: "If its address changes: a service it advertises (repeatable).") var matchServices: [String] = []

    func run() async throws {
        _ = try APIPath.central(for: identifier)
        var options = RelinkConnectOptions(timeout: timeout, services: services, matchName: matchName,
                                           matchManufacturerID: matchManufacturerID, matchServices: matchServices)
        for s in strategies {
            guard let strategy = RelinkConnectOptions.Strategy(rawValue: s) else {
                throw RelinkClientError(.invalidArguments, "Unknown strategy \(s.debugDescription): use known-identifier, already-connected or scan.")
            }
            options.strategies.append(strategy)
        }
        if let addressType {
            guard let type = RelinkConnectOptions.AddressType(rawValue: addressType) else {
                throw RelinkClientError(.invalidArguments, "The address type must be \"public\" or \"random\", not \(addressType.debugDescription).")
            }
            options.addressType = type
        }
        _ = try options.dictionary()
        _ = try RelinkArguments.peripheral(peripheral)
        let manager = try await global.manager()
        defer { manager.close() }
        let path = try await manager.connect(identifier, peripheral: peripheral, options: options)
        let uuid = APIPath.peripheralUUID(of: path)
        if global.json {
            Output.json(["identifier": identifier, "object": path.rawValue, "peripheral": uuid ?? ""])
        } else {
            Output.line(uuid ?? path.rawValue)
        }
    }
}
