import ArgumentParser
import DBus
import RelinkAPI
import RelinkClient
import RelinkModel

/// `relinkctl launch ID --bus-name NAME [--wake-on KIND]...` (or `--remove`):
/// sets how relinkd has the bus start the identifier's program when an
/// event comes while no client of it is attached (docs/relaunch.md).
struct LaunchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch", abstract: "Set (or remove) how relinkd starts the identifier's program by a D-Bus activatable name.",
        discussion: "relinkctl show ID shows the spec and where its starts are.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Option(name: .customLong("bus-name"), help: "The D-Bus activatable name the bus starts the program by.") var busName: String?
    @Option(name: .customLong("wake-on"), help: "An event kind that wakes the program (repeatable; default: every event).")
    var wakeOn: [String] = []
    @Option(name: .customLong("systemd-unit"), help: "A unit relinkd starts instead of activating the bus name: on the system manager for root, on the caller's own user manager for anyone else (docs/relaunch.md#systemd).")
    var systemdUnit: String?
    @Flag(name: .customLong("remove"), help: "Remove the identifier's launch spec.") var remove = false

    /// The spec (nil: `--remove`), checked by the contract's one parser.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func spec() throws(RelinkClientError) -> LaunchSpec? {
        guard remove != (busName != nil) else { throw ArgumentCheck.invalid("give either --bus-name NAME or --remove") }
        guard let busName else { return nil }
        var options: [String: DBusValue] = [LaunchOptions.busNameKey: .string(busName),
                                            LaunchOptions.wakeOnKey: .array(.string, wakeOn.map { .string($0) })]
        if let systemdUnit { options[LaunchOptions.systemdUnitKey] = .string(systemdUnit) }
        do { return try LaunchOptions.spec(in: options) } catch { throw ArgumentCheck.invalid(error.message) }
    }

    /// Checks the arguments before relinkd is called.
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try spec() }
    }

    /// Calls `Manager1.SetLaunch`.
    func run() async throws {
        let (identifier, spec) = (target.identifier, try spec())
        try await global.withManager(identifier: identifier) { manager in try await manager.setLaunch(identifier, spec) }
        if global.json {
            Output.json(["identifier": identifier, "busName": spec?.busName ?? "", "wakeOn": spec?.wakeOn ?? []])
        } else if let spec {
            Output.line("\(identifier): started by \(spec.busName) on \(spec.wakeOn.isEmpty ? "every event" : spec.wakeOn.joined(separator: ", "))")
        } else {
            Output.line("\(identifier): no launch spec")
        }
    }
}
