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
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        try await global.withManager(identifier: identifier) { manager in
            try await manager.pair(identifier, peripheral: peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "paired": true]) } else { Output.line("\(identifier): paired and trusted \(peripheral)") }
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
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        try await global.withManager(identifier: identifier) { manager in
            try await manager.unpair(identifier, peripheral: peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "paired": false]) } else { Output.line("\(identifier): bond removed \(peripheral)") }
    }
}
