import RelinkAPI
import ArgumentParser
import RelinkClient

/// Identifier, peripheral, service and characteristic.
struct GATTArguments: ParsableArguments {
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "An address or a peripheral UUID.") var peripheral: String
    @Argument(help: "The service UUID.") var service: String
    @Argument(help: "The characteristic UUID.") var characteristic: String

    /// Checks every argument before relinkd is called.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func check() throws(RelinkClientError) {
        _ = try APIPath.central(for: identifier)
        _ = try RelinkArguments.peripheral(peripheral)
        _ = try RelinkArguments.bluetoothUUID(service)
        _ = try RelinkArguments.bluetoothUUID(characteristic)
    }

    var json: [String: Any] {
        ["identifier": identifier, "peripheral": peripheral, "service": service, "characteristic": characteristic]
    }
}

/// `relinkctl subscribe ID PERIPHERAL SERVICE CHAR`.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "subscribe", abstract: "Subscribe durably to a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    func run() async throws {
        try target.check()
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.subscribe(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
        if global.json { Output.json(target.json.merging(["subscribed": true]) { $1 }) } else { Output.line("\(target.identifier): subscribed \(target.characteristic)") }
    }
}

/// `relinkctl unsubscribe ID PERIPHERAL SERVICE CHAR`.
struct UnsubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unsubscribe", abstract: "End a subscription.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    func run() async throws {
        try target.check()
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.unsubscribe(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
        if global.json { Output.json(target.json.merging(["subscribed": false]) { $1 }) } else { Output.line("\(target.identifier): unsubscribed \(target.characteristic)") }
    }
}

/// `relinkctl read ID PERIPHERAL SERVICE CHAR`: prints the value in hex.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Read a characteristic (hex on stdout).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments

    func run() async throws {
        try target.check()
        let manager = try await global.manager()
        defer { manager.close() }
        let value = try await manager.read(target.identifier, peripheral: target.peripheral, service: target.service, characteristic: target.characteristic)
        if global.json { Output.json(target.json.merging(["value": RelinkArguments.hex(value)]) { $1 }) } else { Output.line(RelinkArguments.hex(value)) }
    }
}

/// `relinkctl write ID PERIPHERAL SERVICE CHAR HEX [--without-response]`.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Write a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: GATTArguments
    @Argument(help: "The value, hex (e.g. 01ff).") var hex: String
    @Flag(name: .customLong("without-response"), help: "Write without response.") var withoutResponse = false

    func run() async throws {
        try target.check()
        let value = try RelinkArguments.hexBytes(hex)
        try RelinkArguments.checkValue(value)
        let manager = try await global.manager()
        defer { manager.close() }
        try await manager.write(target.identifier, peripheral: target.peripheral, service: target.service,
                                characteristic: target.characteristic, value: value, withResponse: !withoutResponse)
        if global.json {
            Output.json(target.json.merging(["written": RelinkArguments.hex(value)]) { $1 })
        } else {
            Output.line("\(target.identifier): wrote \(value.count) byte(s)")
        }
    }
}
