import ArgumentParser
import RelinkAPI
import RelinkClient

/// `relinkctl register ID`: creates (or reopens) an identifier and prints its restored state.
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "register", abstract: "Register a restore identifier and print its restored state.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Option(name: .customLong("name-rule"), help: "gap or advertising.") var nameRule: String?
    @Option(name: .customLong("event-limit"), parsing: .unconditional,
            help: "Unacknowledged events to keep, 1 to 100000 (a lower bound drops the oldest at once).")
    var eventLimit: UInt32?

    /// The options of `Register` (no replay: relinkctl prints the state, not the events).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): an unknown name
    ///   rule, an event limit outside the contract's bounds.
    func options() throws(RelinkClientError) -> RelinkRegisterOptions {
        var options = RelinkRegisterOptions(replay: false)
        if let nameRule {
            guard let rule = RelinkRegisterOptions.NameRule(rawValue: nameRule) else {
                throw ArgumentCheck.invalid("invalid name rule \(RelinkArguments.echo(nameRule)): expected \"gap\" or \"advertising\"")
            }
            options.nameRule = rule
        }
        if let eventLimit {
            let bounds = APILimits.eventLimits
            guard bounds.contains(Int(eventLimit)) else {
                throw ArgumentCheck.invalid("event_limit must be \(bounds.lowerBound) to \(bounds.upperBound), not \(eventLimit)")
            }
            options.eventLimit = eventLimit
        }
        return options
    }

    /// Checks the options before relinkd is called (see ``options()``).
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try options() }
    }

    /// Calls `Manager1.Register` (no replay) and prints the restored state.
    func run() async throws {
        let (identifier, options) = (target.identifier, try options())
        let (path, state) = try await global.withManager(identifier: identifier) { manager in
            try await manager.register(identifier, options: options)
        }
        if global.json {
            Output.json(JSONForms.restored(state, identifier: identifier, object: path.rawValue))
            return
        }
        Output.line("\(state.isNew ? "Created" : "Restored") \(identifier) at \(path.rawValue)")
        Output.line("Scanning: \(state.scanning)\(state.scanServices.isEmpty ? "" : " for " + state.scanServices.joined(separator: " "))")
        Output.line("Events: last \(state.lastSequence), acknowledged \(state.acknowledged), dropped \(state.droppedEvents)")
        if let adapter = state.adapterStatus {
            Output.line(StatusCommand.adapterStateLine(adapter.state.rawValue, roles: adapter.roles.map(\.rawValue)))
        }
        for p in state.peripherals {
            Output.line("Peripheral \(p.id) \(p.address) \(p.state)\(p.name.isEmpty ? "" : " \"\(p.name)\"")")
            for s in p.subscriptions { Output.line("  subscribed \(s.service) \(s.characteristic)") }
        }
    }
}
