import ArgumentParser
import RelinkClient

/// `relinkctl retrieve ID [PERIPHERAL...] [--connected --service UUID...]`:
/// the peripherals relinkd knows among those named, or those connected to
/// the system that offer a service (CoreBluetooth's retrieve calls).
struct RetrieveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retrieve",
        abstract: "List the known peripherals among those named, or (--connected) those connected to the system that offer a service.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "Peripherals by address or UUID (RetrievePeripherals).") var peripherals: [String] = []
    @Flag(help: "The devices connected to the system by any program that offer one of --service (RetrieveConnectedPeripherals).")
    var connected = false
    @Option(name: .customLong("service"), help: "A service UUID, with --connected (repeatable).") var services: [String] = []

    /// Refuses a mix of the two forms, or one with nothing to ask.
    func validate() throws {
        if connected {
            guard peripherals.isEmpty else { throw ValidationError("--connected takes --service UUIDs, not peripherals") }
            guard !services.isEmpty else { throw ValidationError("--connected needs at least one --service UUID") }
        } else {
            guard services.isEmpty else { throw ValidationError("--service goes with --connected") }
            guard !peripherals.isEmpty else { throw ValidationError("name at least one peripheral, or use --connected --service UUID") }
        }
    }

    /// Calls the retrieve method and prints one line (or JSON object) per peripheral found.
    func run() async throws {
        let found = try await global.withManager(identifier: identifier) { manager in
            connected ? try await manager.retrieveConnectedPeripherals(identifier, services: services)
                : try await manager.retrievePeripherals(identifier, peripherals)
        }
        if global.json {
            Output.json(found.map { p -> [String: Any] in
                ["id": p.id, "address": p.address, "name": p.name, "connected": p.connected, "services": p.services, "object": p.object]
            })
            return
        }
        if found.isEmpty { Output.line(connected ? "no connected peripheral offers those services" : "none of them is known") }
        for p in found {
            Output.line("\(p.id) \(p.address) \(p.connected ? "connected" : "disconnected")" + (p.name.isEmpty ? "" : " \"\(p.name)\""))
        }
    }
}
