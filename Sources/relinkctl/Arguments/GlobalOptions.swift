import ArgumentParser
import DBus
import Foundation
import RelinkAPI
import RelinkClient

/// Options every command takes (before or after the command name), and the
/// one way a command talks to relinkd: ``withManager(identifier:_:)``.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customLong("bus-address"), help: "The bus relinkd is on (default: DBUS_SYSTEM_BUS_ADDRESS or the system bus).")
    var busAddress: String?

    @Flag(help: "Print one JSON document on stdout instead of text.")
    var json = false

    /// The bus `--bus-address` names, else the system bus.
    var bus: RelinkBus { RelinkBus(address: busAddress) }

    /// The bus as messages name it: its address when one is known.
    var busDescription: String {
        if let busAddress, !busAddress.isEmpty { return busAddress }
        if let system = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"], !system.isEmpty { return system }
        return "the system bus"
    }

    /// Connects to relinkd's bus, runs `body` with the connection and closes
    /// it, also when `body` throws.
    ///
    /// Errors come out in relinkctl's words: `org.relink` without an owner
    /// is "relinkd is not running" with the bus named, and an unknown
    /// `identifier` (the command's, when it has one) reads the same whichever
    /// object or method answered.
    /// - Throws: ``RelinkClientError`` (unreachable, or relinkd's reply), or
    ///   what `body` throws.
    func withManager<Result>(identifier: String? = nil, _ body: (RelinkManager) async throws -> Result) async throws -> Result {
        do {
            let manager = try await RelinkManager.connect(to: bus, timeout: .seconds(25))
            defer { manager.close() }
            return try await body(manager)
        } catch let error as RelinkClientError {
            throw explained(error, identifier: identifier)
        }
    }

    /// D-Bus's answers for a name nobody owns.
    private static let noOwnerNames: Set<String> = [DBusError.Name.serviceUnknown.rawValue, DBusError.Name.nameHasNoOwner.rawValue]
    /// libdbus's answers for a bus that is not there (no socket, nobody listening).
    private static let noBusNames: Set<String> = [DBusError.Name.fileNotFound.rawValue, DBusError.Name.noServer.rawValue]

    /// `error` with the message relinkctl gives for its condition, saying
    /// what to do where relinkctl knows (name and so exit code unchanged;
    /// still one line).
    func explained(_ error: RelinkClientError, identifier: String?) -> RelinkClientError {
        if Self.noOwnerNames.contains(error.name.rawValue) {
            return RelinkClientError(error.name, "relinkd is not running (no owner of \(RelinkNames.busName) on \(busDescription)); "
                                     + "start it with `systemctl start relinkd`, or run `relinkd` on that bus")
        }
        if Self.noBusNames.contains(error.name.rawValue) {
            return RelinkClientError(error.name, "\(error.message) (relinkctl's bus: --bus-address, else "
                                     + "DBUS_SYSTEM_BUS_ADDRESS, else the system bus; is dbus running there?)")
        }
        if error.name == .unknownIdentifier, let identifier {
            let unknown = RelinkClientError.unknownIdentifier(identifier)
            return RelinkClientError(unknown.name, unknown.message + " Register it with `relinkctl register \(identifier)`.")
        }
        return error
    }
}
