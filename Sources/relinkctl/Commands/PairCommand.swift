import ArgumentParser
import RelinkClient

/// `relinkctl pair ID PERIPHERAL`.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with (bond to) a connected peripheral of a connection intent, Just Works, and trust it.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments

    /// Calls `Central1.Pair`.
    func run() async throws {
        try await BondCall.run(global, target, paired: true, done: "paired and trusted") { try await $0.pair($1, peripheral: $2) }
    }
}

/// `relinkctl unpair ID PERIPHERAL`.
struct UnpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair",
        abstract: "Remove bluetoothd's bond with a peripheral no identifier uses any more (cancel and unsubscribe first).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments

    /// Calls `Central1.Unpair`.
    func run() async throws {
        try await BondCall.run(global, target, paired: false, done: "bond removed") { try await $0.unpair($1, peripheral: $2) }
    }
}

/// What `pair` and `unpair` share: one call about a peripheral's bond, then
/// one line (or its JSON with `paired`).
enum BondCall {
    static func run(_ global: GlobalOptions, _ target: PeripheralArguments, paired: Bool, done: String,
                    _ call: @escaping @Sendable (RelinkManager, String, String) async throws -> Void) async throws {
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        try await global.withManager(identifier: identifier) { manager in
            try await call(manager, identifier, peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "paired": paired]) } else { Output.line("\(identifier): \(done) \(peripheral)") }
    }
}
