import ArgumentParser
import RelinkClient

/// `relinkctl peripherals`: the peripherals the caller may see.
struct PeripheralsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "peripherals", abstract: "List the peripherals you may see.")
    @OptionGroup var global: GlobalOptions

    /// Lists the `Peripheral1` objects the caller may see, one line (or JSON object) each.
    func run() async throws {
        let list = try await global.withManager { manager in try await manager.peripherals() }
        if global.json {
            Output.json(list.map(JSONForms.peripheral))
            return
        }
        for p in list {
            let name = p.name.isEmpty ? "" : " \"\(p.name)\" (\(p.nameSource))"
            // The link's sizes, when it is up with its MTU known.
            let sizes = p.mtu == 0 ? "" : " mtu \(p.mtu), largest write \(p.maximumWriteValueLength(for: .withResponse))"
                + " with response, \(p.maximumWriteValueLength(for: .withoutResponse)) without"
            // The bond, as BlueZ keeps it.
            let bond = [p.paired ? "paired" : nil, p.bonded ? "bonded" : nil, p.trusted ? "trusted" : nil].compactMap { $0 }
            let bonding = bond.isEmpty ? "" : " " + bond.joined(separator: ",")
            Output.line("\(p.id) \(p.address) \(p.connected ? "connected" : "disconnected")\(bonding)\(name)\(sizes)")
        }
    }
}
