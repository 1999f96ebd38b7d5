import ArgumentParser
import RelinkClient

/// `relinkctl connection-events ID [--service UUID...] [--peripheral P...] | --stop`:
/// register the identifier for `connection-event`s (links made and lost at
/// the system level, by any program), or stop them.
struct ConnectionEventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connection-events",
        abstract: "Hear when a peripheral that offers a service, or a named one, connects or disconnects (by any program); --stop ends it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The restore identifier.") var identifier: String
    @Option(name: .customLong("service"), help: "A service UUID (repeatable).") var services: [String] = []
    @Option(name: .customLong("peripheral"), help: "A peripheral by address or UUID (repeatable).") var peripherals: [String] = []
    @Flag(help: "Stop hearing connection events (UnregisterForConnectionEvents).") var stop = false

    /// Refuses `--stop` with a match, or nothing to match.
    func validate() throws {
        if stop {
            guard services.isEmpty, peripherals.isEmpty else { throw ValidationError("--stop takes no --service or --peripheral") }
        } else {
            guard !services.isEmpty || !peripherals.isEmpty else { throw ValidationError("name at least one --service or --peripheral, or use --stop") }
        }
    }

    /// Registers (or unregisters) and says what now holds.
    func run() async throws {
        try await global.withManager(identifier: identifier) { manager in
            if stop {
                try await manager.unregisterForConnectionEvents(identifier)
            } else {
                try await manager.registerForConnectionEvents(identifier, services: services, peripherals: peripherals)
            }
        }
        if global.json {
            Output.json(["identifier": identifier, "registered": !stop, "services": services, "peripherals": peripherals] as [String: Any])
            return
        }
        Output.line(stop ? "\(identifier): no more connection events"
            : "\(identifier): connection events for " + (services + peripherals).joined(separator: ", ") + " (see relinkctl events)")
    }
}
