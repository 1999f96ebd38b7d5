import ArgumentParser
import RelinkClient

/// Options every command takes (before or after the command name).
struct GlobalOptions: ParsableArguments {
    @Option(name: .customLong("bus-address"), help: "The bus relinkd is on (default: DBUS_SYSTEM_BUS_ADDRESS or the system bus).")
    var busAddress: String?

    @Flag(help: "Print one JSON document on stdout (JSON lines with events --follow).")
    var json = false

    var bus: RelinkBus { RelinkBus(address: busAddress) }

    /// A connection to relinkd's bus.
    /// - Throws: ``RelinkClientError`` (unreachable).
    func manager() async throws(RelinkClientError) -> RelinkManager {
        try await RelinkManager.connect(to: bus, timeout: .seconds(25))
    }
}
