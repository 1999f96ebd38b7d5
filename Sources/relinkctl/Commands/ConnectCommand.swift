import ArgumentParser
import RelinkAPI
import RelinkClient
import RelinkModel

/// `relinkctl connect ID PERIPHERAL [--timeout S] [--service UUID]... [--strategy S]... [--match-…]`.
struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "connect", abstract: "Add a durable connection intent.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments
    // Numbers are read unconditionally so that "-1" is a value the checks
    // refuse, not an unknown option.
    @Option(parsing: .unconditional, help: "Give up after this many seconds, > 0 (default: pending until cancelled).") var timeout: Double?
    @Option(name: .customLong("service"), help: "A service UUID the peripheral exposes (repeatable).") var services: [String] = []
    @Option(name: .customLong("strategy"), help: "known-identifier, already-connected or scan (repeatable, in order).") var strategies: [String] = []
    @Option(name: .customLong("address-type"), help: "public or random.") var addressType: String?
    @Option(name: .customLong("match-name"), help: "If its address changes: its exact advertised name.") var matchName: String?
    @Option(name: .customLong("match-manufacturer-id"), parsing: .unconditional,
            help: "If its address changes: a company ID in its manufacturer data (0 to 65535).") var matchManufacturerID: UInt16?
    @Option(name: .customLong("match-service"), help: "If its address changes: a service it advertises (repeatable).") var matchServices: [String] = []
    @Option(name: .customLong("match-manufacturer-data"),
            help: "If its address changes: its manufacturer data of company C starts with HEX (under MASK): C:HEX[/MASK] (repeatable; all must match).")
    var matchManufacturerData: [String] = []
    @Option(name: .customLong("match-service-data"),
            help: "If its address changes: its service data of UUID starts with HEX (under MASK): UUID:HEX[/MASK] (repeatable; all must match).")
    var matchServiceData: [String] = []
    @Flag(name: .customLong("no-pair-on-demand"),
          help: "Never pair by itself when the peripheral refuses a read, write or subscription for want of encryption (default: pair once and retry).")
    var noPairOnDemand = false
    @Option(name: .customLong("pairing-capability"),
            help: "The agent's I/O capability when relinkd pairs for this intent (Pair, pairing on demand): DisplayOnly, DisplayYesNo, KeyboardOnly, KeyboardDisplay or NoInputNoOutput (default, Just Works); its passkey or confirmation requests go to the identifier's attached client as pairing-request events (none attached: the pairing fails).")
    var pairingCapability: String?

    /// The options of `Connect`, each checked by the client library's rules
    /// (the model's parsers, the contract's limits).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func options() throws(RelinkClientError) -> RelinkConnectOptions {
        var options = RelinkConnectOptions(timeout: timeout, services: services, matchName: matchName,
                                           matchManufacturerID: matchManufacturerID, matchServices: matchServices,
                                           matchDataPrefixes: try RelinkArguments.dataPrefixes(manufacturer: matchManufacturerData, service: matchServiceData))
        if noPairOnDemand { options.pairOnDemand = false }
        if let pairingCapability {
            guard let capability = AgentCapability(rawValue: pairingCapability) else {
                throw ArgumentCheck.invalid("invalid pairing capability \(RelinkArguments.echo(pairingCapability)): expected one of \(AgentCapability.names)")
            }
            options.pairingCapability = capability
        }
        for s in strategies {
            guard let strategy = RelinkConnectOptions.Strategy(rawValue: s) else {
                let known = RelinkConnectOptions.Strategy.allCases.map(\.rawValue).joined(separator: ", ")
                throw ArgumentCheck.invalid("invalid strategy \(RelinkArguments.echo(s)): expected one of \(known)")
            }
            options.strategies.append(strategy)
        }
        if let addressType {
            do {
                let kind = try BluetoothAddress.Kind(parsing: addressType)
                options.addressType = RelinkConnectOptions.AddressType(rawValue: kind.rawValue)
            } catch {
                throw ArgumentCheck.invalid("\(error)")
            }
        }
        _ = try options.dictionary()
        return options
    }

    /// Checks every option before relinkd is called (see ``options()``).
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try options() }
    }

    /// Calls `Central1.Connect` and prints the peripheral's UUID, then
    /// (text output) what happens next: the intent is kept until it
    /// connects, and where to watch it.
    func run() async throws {
        let (identifier, peripheral, options) = (target.identifier, target.peripheral, try options())
        let path = try await global.withManager(identifier: identifier) { manager in
            try await manager.connect(identifier, peripheral: peripheral, options: options)
        }
        let uuid = APIPath.peripheralUUID(of: path)
        if global.json {
            Output.json(["identifier": identifier, "object": path.rawValue, "peripheral": uuid ?? ""])
        } else {
            Output.line(uuid ?? path.rawValue)
            let until = timeout.map { "until it connects or \($0.rounded() == $0 ? String(Int($0)) : String($0)) s pass" } ?? "until it connects, then for good (pending until cancelled)"
            Output.line("\(identifier): looking for \(peripheral) \(until); `relinkctl events \(identifier) --follow` shows "
                        + "`connected`, `relinkctl status` why it is not yet")
        }
    }
}
