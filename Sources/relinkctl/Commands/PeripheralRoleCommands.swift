import ArgumentParser
import Foundation
import RelinkClient
import RelinkModel

// The peripheral role (docs/api/PeripheralManager1.md): `peripheral-role`,
// `publish`, `unpublish`, `advertise`, `stop-advertising`, `respond`, `update`.

/// A JSON file argument (`publish`, `advertise`), read and decoded by the
/// model's JSON forms before relinkd is called.
enum JSONFile {
    /// The file's text.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) when it cannot be read.
    static func text(_ path: String) throws(RelinkClientError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ArgumentCheck.invalid("cannot read \(RelinkArguments.echo(path))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A command that makes `PeripheralManager1` calls on an identifier:
/// its calls are built and checked in `validate()`, before relinkd is
/// called, and sent in order by ``send()``.
protocol PeripheralRoleCall: AsyncParsableCommand {
    /// The global options.
    var global: GlobalOptions { get }
    /// The identifier.
    var target: IdentifierArgument { get }
    /// The calls, checked.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func calls() throws(RelinkClientError) -> [RelinkPeripheralManagerCall]
}

extension PeripheralRoleCall {
    /// Checks the calls before relinkd is called.
    mutating func validate() throws {
        try ArgumentCheck.run { [self] () throws(RelinkClientError) in _ = try calls() }
    }

    /// Sends the calls in order, on one connection.
    /// - Returns: the calls sent.
    /// - Throws: ``RelinkClientError``: the first error relinkd replied, or unreachable.
    @discardableResult
    func send() async throws -> [RelinkPeripheralManagerCall] {
        let identifier = target.identifier, calls = try calls()
        try await global.withManager(identifier: identifier) { manager in
            for call in calls { _ = try await manager.peripheralManager(identifier, call) }
        }
        return calls
    }
}

/// `relinkctl peripheral-role ID`: `PeripheralManager1.State`.
struct PeripheralRoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "peripheral-role",
                                                    abstract: "Show an identifier's published services, advertisement, cached values and subscribed centrals.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument

    /// Calls `State` and prints it.
    func run() async throws {
        let identifier = target.identifier
        let record = try await global.withManager(identifier: identifier) { manager in try await manager.peripheralManagerState(identifier) }
        if global.json {
            var document = Output.parsed(record.json) as? [String: Any] ?? [:]
            document["identifier"] = identifier
            Output.json(document)
            return
        }
        Output.line("\(identifier): \(record.services.count) service(s)")
        for service in record.services {
            Output.line("  service \(service.uuid)\(service.isPrimary ? "" : " (secondary)")")
            for c in service.characteristics {
                var line = "    characteristic \(c.uuid) [\(c.properties.names.joined(separator: ", "))]"
                if let value = c.value { line += " value \(RelinkArguments.hex(value))" }
                if c.cacheable { line += " cacheable" }
                Output.line(line)
            }
        }
        if let ad = record.advertisement, record.advertisementWaiting {
            Output.line("Advertising: waiting for an advertising instance (the controller's are all taken): \(ad.json)")
        } else if let ad = record.advertisement {
            Output.line("Advertising: \(ad.json)")
        } else {
            Output.line("Advertising: no")
        }
        for (key, value) in record.cachedValues.sorted(by: { $0.key < $1.key }) {
            Output.line("Cached \(key.service) \(key.characteristic): \(RelinkArguments.hex(value))")
        }
        for (key, centrals) in record.subscribers.sorted(by: { $0.key < $1.key }) where !centrals.isEmpty {
            Output.line("Subscribed to \(key.service) \(key.characteristic): \(centrals.sorted().joined(separator: ", "))")
        }
    }
}

/// `relinkctl publish ID FILE`: `AddService` for the service (or each of
/// the list of services) in FILE.
struct PublishCommand: PeripheralRoleCall {
    static let configuration = CommandConfiguration(commandName: "publish",
                                                    abstract: "Publish GATT services from a JSON file (one service or a list).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "A JSON file: one service or a list of services (docs/api/PeripheralManager1.md).") var file: String

    /// `AddService` for each service of the file, each checked as relinkd
    /// checks it alone, and all of them together.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func calls() throws(RelinkClientError) -> [RelinkPeripheralManagerCall] {
        let text = try JSONFile.text(file)
        let services: [PublishedService]
        do {
            if text.drop(while: \.isWhitespace).first == "[" { services = try PublishedService.list(json: text) } else { services = [try PublishedService(json: text)] }
        } catch {
            throw ArgumentCheck.invalid("\(error)")
        }
        let calls = services.map(RelinkPeripheralManagerCall.addService)
        for call in calls { _ = try call.arguments() }
        // Together too (a UUID twice in the file); includes are relinkd's to check.
        do { try PublishedService.validate(services.map { PublishedService(uuid: $0.uuid, isPrimary: $0.isPrimary, characteristics: $0.characteristics) }) } catch {
            throw ArgumentCheck.invalid("\(error)")
        }
        return calls
    }

    /// Calls `AddService` for each service, in the file's order.
    func run() async throws {
        let uuids = try await send().compactMap { call -> String? in if case .addService(let service) = call { service.uuid.string } else { nil } }
        if global.json {
            Output.json(["identifier": target.identifier, "published": uuids])
        } else {
            Output.line("\(target.identifier): published \(uuids.joined(separator: ", "))")
        }
    }
}

/// `relinkctl unpublish ID [UUID] [--all]`: `RemoveService` or `RemoveAllServices`.
struct UnpublishCommand: PeripheralRoleCall {
    static let configuration = CommandConfiguration(commandName: "unpublish", abstract: "Remove a published service, or all of them.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "The service UUID.") var service: String?
    @Flag(help: "Remove every published service.") var all = false

    /// The call: one service, or all.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): a bad UUID, or neither or both of UUID and `--all`.
    func calls() throws(RelinkClientError) -> [RelinkPeripheralManagerCall] {
        switch (service, all) {
        case (let uuid?, false):
            do { return [.removeService(try BluetoothUUID(parsing: uuid))] } catch { throw ArgumentCheck.invalid("\(error)") }
        case (nil, true): return [.removeAllServices]
        default: throw ArgumentCheck.invalid("give a service UUID or --all, not both or neither")
        }
    }

    /// Calls `RemoveService` or `RemoveAllServices`.
    func run() async throws {
        let identifier = target.identifier
        let removed: Any = if case .removeService(let uuid)? = try await send().first { uuid.string } else { "all" }
        if global.json { Output.json(["identifier": identifier, "removed": removed]) } else { Output.line("\(identifier): removed \(removed)") }
    }
}

/// `relinkctl advertise ID FILE`: `StartAdvertising` with the advertisement in FILE.
struct AdvertiseCommand: PeripheralRoleCall {
    static let configuration = CommandConfiguration(commandName: "advertise",
                                                    abstract: "Advertise (replacing what was advertised) from a JSON file.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "A JSON file: the advertisement (docs/api/PeripheralManager1.md).") var file: String

    /// The advertisement of the file.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func advertisement() throws(RelinkClientError) -> PeripheralAdvertisement {
        let advertisement: PeripheralAdvertisement
        do { advertisement = try PeripheralAdvertisement(json: try JSONFile.text(file)) } catch let error as RelinkClientError {
            throw error
        } catch {
            throw ArgumentCheck.invalid("\(error)")
        }
        return advertisement
    }

    /// `StartAdvertising`, checked (31 bytes, no UUID twice).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func calls() throws(RelinkClientError) -> [RelinkPeripheralManagerCall] {
        let call = RelinkPeripheralManagerCall.startAdvertising(try advertisement())
        _ = try call.arguments()
        return [call]
    }

    /// Calls `StartAdvertising`.
    func run() async throws {
        let identifier = target.identifier, advertisement = try advertisement()
        try await send()
        if global.json {
            Output.json(["identifier": identifier, "advertising": Output.parsed(advertisement.json), "bytes": advertisement.encodedLength])
        } else {
            Output.line("\(identifier): advertising (\(advertisement.encodedLength) of \(PeripheralAdvertisement.legacyLimit) bytes)")
        }
    }
}

/// `relinkctl stop-advertising ID`: `StopAdvertising`.
struct StopAdvertisingCommand: PeripheralRoleCall {
    static let configuration = CommandConfiguration(commandName: "stop-advertising", abstract: "Stop advertising.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument

    /// `StopAdvertising`.
    func calls() -> [RelinkPeripheralManagerCall] { [.stopAdvertising] }

    /// Calls `StopAdvertising`.
    func run() async throws {
        let identifier = target.identifier
        try await send()
        if global.json { Output.json(["identifier": identifier, "advertising": false]) } else { Output.line("\(identifier): not advertising") }
    }
}

/// `relinkctl respond ID REQUEST [HEX] [--error NAME]`: `Respond` or `RespondWithError`.
struct RespondCommand: PeripheralRoleCall {
    static let configuration = CommandConfiguration(commandName: "respond",
                                                    abstract: "Answer a read-request (with a value) or a write-request, or either with an ATT error.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "The request number of the read-request or write-request event.") var request: UInt64
    @Argument(help: "The value for a read, hex (e.g. 01ff); none for a write.") var hex: String?
    @Option(name: .customLong("error"), help: "Answer with this ATT error instead (e.g. readNotPermitted, unlikelyError).") var attError: String?

    /// The call: a value, or an ATT error.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): not hex, over
    ///   512 bytes, an unknown ATT error name, or both a value and `--error`.
    func calls() throws(RelinkClientError) -> [RelinkPeripheralManagerCall] {
        let call: RelinkPeripheralManagerCall
        switch (hex, attError) {
        case (_?, _?): throw ArgumentCheck.invalid("give a value or --error, not both")
        case (nil, let name?):
            guard let error = ATTError(rawValue: name) else {
                throw ArgumentCheck.invalid("unknown ATT error \(RelinkArguments.echo(name)): one of \(ATTError.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            call = .respondWithError(request: request, error: error)
        case (let hex, nil):
            call = .respond(request: request, value: try RelinkArguments.hexBytes(hex ?? ""))
        }
        _ = try call.arguments()
        return [call]
    }

    /// Calls `Respond` or `RespondWithError`.
    func run() async throws {
        let identifier = target.identifier
        try await send()
        if global.json {
            Output.json(["identifier": identifier, "request": request, "error": attError.map { $0 as Any } ?? NSNull()])
        } else {
            Output.line("\(identifier): answered request \(request)\(attError.map { " with \($0)" } ?? "")")
        }
    }
}

/// `relinkctl update ID SERVICE CHAR HEX`: `UpdateValue`; a full queue is
/// `UpdateQueueFull` (exit 1): try again after a `ready-to-update` event.
struct UpdateCommand: PeripheralRoleCall {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Send a value to the centrals subscribed to a characteristic.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument
    @Argument(help: "The service UUID.") var service: String
    @Argument(help: "The characteristic UUID.") var characteristic: String
    @Argument(help: "The value, hex (e.g. 01ff).") var hex: String

    /// The call.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): a bad UUID, not hex, over 512 bytes.
    func calls() throws(RelinkClientError) -> [RelinkPeripheralManagerCall] {
        let key: CharacteristicKey
        do { key = CharacteristicKey(service: try BluetoothUUID(parsing: service), characteristic: try BluetoothUUID(parsing: characteristic)) } catch {
            throw ArgumentCheck.invalid("\(error)")
        }
        let call = RelinkPeripheralManagerCall.updateValue(key, value: try RelinkArguments.hexBytes(hex))
        _ = try call.arguments()
        return [call]
    }

    /// Calls `UpdateValue`.
    func run() async throws {
        let identifier = target.identifier
        guard case .updateValue(let key, let value)? = try await send().first else { return }
        if global.json {
            Output.json(["identifier": identifier, "service": key.service.string, "characteristic": key.characteristic.string,
                         "sent": RelinkArguments.hex(value)])
        } else {
            Output.line("\(identifier): sent \(value.count) byte(s)")
        }
    }
}
