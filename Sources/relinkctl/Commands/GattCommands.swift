import ArgumentParser
import Foundation
import RelinkClient
import RelinkModel

/// `relinkctl gatt ID PERIPHERAL`: the peripheral's GATT database.
struct GattCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt", abstract: "Show a connected peripheral's GATT database (services, included services, characteristics, descriptors).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: PeripheralArguments

    /// Calls `Central1.GattDatabase`; prints a tree, or with `--json` the database's JSON.
    func run() async throws {
        let database = try await global.withManager(identifier: target.identifier) { manager in
            try await manager.gattDatabase(target.identifier, peripheral: target.peripheral)
        }
        if global.json {
            Output.line(database.json)
            return
        }
        for service in database.services {
            let includes = service.includedServices.isEmpty ? "" : " includes \(service.includedServices.map(\.string).joined(separator: ", "))"
            Output.line("service \(service.uuid) \(service.isPrimary ? "primary" : "secondary")\(includes)")
            for characteristic in service.characteristics {
                Output.line("  characteristic \(characteristic.uuid) [\(characteristic.properties.names.joined(separator: ", "))] flags: \(characteristic.flags.joined(separator: ","))")
                for descriptor in characteristic.descriptors {
                    Output.line("    descriptor \(descriptor.uuid) flags: \(descriptor.flags.joined(separator: ","))")
                }
            }
        }
    }
}

/// Identifier, peripheral, service, characteristic and descriptor.
struct DescriptorArguments: ParsableArguments {
    @OptionGroup var characteristic: GATTArguments
    @Argument(help: "The descriptor UUID (2901, 2904, or 128-bit).") var descriptor: String

    /// Checks the descriptor UUID before relinkd is called.
    mutating func validate() throws {
        try ArgumentCheck.run { [descriptor] () throws(RelinkClientError) in _ = try RelinkArguments.bluetoothUUID(descriptor) }
    }

    /// The arguments as keys of a `--json` document.
    var json: [String: Any] { characteristic.json.merging(["descriptor": descriptor]) { $1 } }
}

/// `relinkctl read-descriptor ID PERIPHERAL SERVICE CHAR DESC`: prints the value in hex.
struct ReadDescriptorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read-descriptor", abstract: "Read a descriptor (hex on stdout).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: DescriptorArguments

    /// Calls `Central1.ReadDescriptor` and prints the value in hex.
    func run() async throws {
        let t = target.characteristic
        let value = try await global.withManager(identifier: t.identifier) { manager in
            try await manager.readDescriptor(t.identifier, peripheral: t.peripheral, service: t.service, characteristic: t.characteristic,
                                             descriptor: target.descriptor)
        }
        if global.json { Output.json(target.json.merging(["value": RelinkArguments.hex(value)]) { $1 }) } else { Output.line(RelinkArguments.hex(value)) }
    }
}

/// `relinkctl write-descriptor ID PERIPHERAL SERVICE CHAR DESC HEX`.
struct WriteDescriptorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write-descriptor",
                                                    abstract: "Write a descriptor (not the CCCD 0x2902: subscriptions own it).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: DescriptorArguments
    @Argument(help: "The value, hex (e.g. 01ff).") var hex: String

    /// The bytes to write.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func value() throws(RelinkClientError) -> [UInt8] {
        let value = try RelinkArguments.hexBytes(hex)
        try RelinkArguments.checkValue(value)
        return value
    }

    /// Checks the value before relinkd is called.
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try value() }
    }

    /// Calls `Central1.WriteDescriptor`.
    func run() async throws {
        let value = try value(), t = target.characteristic
        try await global.withManager(identifier: t.identifier) { manager in
            try await manager.writeDescriptor(t.identifier, peripheral: t.peripheral, service: t.service, characteristic: t.characteristic,
                                              descriptor: target.descriptor, value: value)
        }
        if global.json {
            Output.json(target.json.merging(["written": RelinkArguments.hex(value)]) { $1 })
        } else {
            Output.line("\(t.identifier): wrote \(value.count) byte(s) to descriptor \(target.descriptor)")
        }
    }
}
