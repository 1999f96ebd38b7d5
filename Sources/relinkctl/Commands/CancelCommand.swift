import ArgumentParser
import RelinkClient

/// `relinkctl cancel ID PERIPHERAL [--remove-bond]`.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "End a connection intent and its subscriptions.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments
    @Flag(name: .customLong("remove-bond"),
          help: "Also remove bluetoothd's bond with the peripheral if no identifier uses it any more (else it stays, and the reason is printed).")
    var removeBond = false

    /// Calls `Central1.Cancel`, or `CancelWith` for `--remove-bond`.
    func run() async throws {
        let (identifier, peripheral) = (target.identifier, target.peripheral)
        if removeBond {
            let outcome = try await global.withManager(identifier: identifier) { manager in
                try await manager.cancel(identifier, peripheral: peripheral, removeBond: true)
            }
            if global.json {
                Output.json(["identifier": identifier, "peripheral": peripheral, "cancelled": true, "bondRemoved": outcome.removed, "reason": outcome.reason])
            } else {
                Output.line("\(identifier): cancelled \(peripheral); " + (outcome.removed ? "bond removed" : "bond kept: \(outcome.reason)"))
            }
            return
        }
        try await global.withManager(identifier: identifier) { manager in
            try await manager.cancel(identifier, peripheral: peripheral)
        }
        if global.json { Output.json(["identifier": identifier, "peripheral": peripheral, "cancelled": true]) } else { Output.line("\(identifier): cancelled \(peripheral)") }
    }
}
