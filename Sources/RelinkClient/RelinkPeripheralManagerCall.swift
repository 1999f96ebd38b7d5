public import DBus
public import RelinkAPI
public import RelinkModel

/// One call of `org.relink.PeripheralManager1` with its arguments, checked
/// and encoded as relinkd takes them (docs/api/PeripheralManager1.md): what
/// ``RelinkManager`` sends for ``RelinkPeripheralManager`` and `relinkctl`.
public enum RelinkPeripheralManagerCall: Sendable, Hashable {
    /// `AddService`: publishes a service (its JSON form).
    case addService(PublishedService)
    /// `RemoveService`: removes a published service by UUID.
    case removeService(BluetoothUUID)
    /// `RemoveAllServices`.
    case removeAllServices
    /// `StartAdvertising`: advertises (its JSON form), replacing what was advertised.
    case startAdvertising(PeripheralAdvertisement)
    /// `StopAdvertising`.
    case stopAdvertising
    /// `Respond`: answers a read with a value, or a write with success.
    case respond(request: UInt64, value: [UInt8])
    /// `RespondWithError`: answers a request with an ATT error.
    case respondWithError(request: UInt64, error: ATTError)
    /// `UpdateValue`: sends a value to the characteristic's subscribed centrals.
    case updateValue(CharacteristicKey, value: [UInt8])
    /// `UpdateValues`: several values for the characteristic's subscribed
    /// centrals in one call, in order; relinkd takes as many as fit.
    case updateValues(CharacteristicKey, values: [[UInt8]])
    /// `State`: the peripheral role as relinkd keeps it.
    case state

    /// The method called.
    public var member: PeripheralManager1Member {
        switch self {
        case .addService: .addService
        case .removeService: .removeService
        case .removeAllServices: .removeAllServices
        case .startAdvertising: .startAdvertising
        case .stopAdvertising: .stopAdvertising
        case .respond: .respond
        case .respondWithError: .respondWithError
        case .updateValue: .updateValue
        case .updateValues: .updateValues
        case .state: .state
        }
    }

    /// The call's arguments, after the checks relinkd would make on them
    /// without its state (a service's validation, an advertisement's 31
    /// bytes, a value's 512 bytes), so a bad argument is refused before
    /// anything is sent.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) naming the problem.
    public func arguments() throws(RelinkClientError) -> [DBusValue] {
        switch self {
        case .addService(let service):
            // Alone: whether its included services are published is relinkd's to say.
            var alone = service
            alone.includedServices = []
            do { try PublishedService.validate([alone]) } catch { throw .invalid("\(error)") }
            return [.string(service.json)]
        case .removeService(let uuid):
            return [.string(uuid.string)]
        case .startAdvertising(let advertisement):
            do { try advertisement.validate() } catch { throw .invalid("\(error)") }
            return [.string(advertisement.json)]
        case .removeAllServices, .stopAdvertising, .state:
            return []
        case .respond(let request, let value):
            try RelinkArguments.checkValue(value)
            return [.uint64(request), Self.bytes(value)]
        case .respondWithError(let request, let error):
            return [.uint64(request), .string(error.rawValue)]
        case .updateValue(let key, let value):
            try RelinkArguments.checkValue(value)
            return [.string(key.service.string), .string(key.characteristic.string), Self.bytes(value)]
        case .updateValues(let key, let values):
            guard (1...maximumUpdateBatch).contains(values.count) else {
                throw .invalid("1 to \(maximumUpdateBatch) values, got \(values.count)")
            }
            for value in values { try RelinkArguments.checkValue(value) }
            return [.string(key.service.string), .string(key.characteristic.string), .array(.array(.byte), values.map(Self.bytes))]
        }
    }

    static func bytes(_ value: [UInt8]) -> DBusValue { .array(.byte, value.map(DBusValue.byte)) }
}

extension RelinkManager {
    /// Calls `org.relink.PeripheralManager1` on the identifier's object.
    /// - Returns: the reply.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (before sending,
    ///   or relinkd's), the errors docs/api/PeripheralManager1.md lists for
    ///   the method (`AlreadyExists`, `UnknownCharacteristic`, `UnknownRequest`,
    ///   `UpdateQueueFull`, `NotSupported`, `StoreFailed`, `UnknownIdentifier`); unreachable.
    @discardableResult
    public func peripheralManager(_ identifier: String, _ call: RelinkPeripheralManagerCall) async throws(RelinkClientError) -> Message {
        let arguments = try call.arguments()
        return try await self.call(try APIPath.central(for: identifier), RelinkNames.peripheralManager, call.member.rawValue, arguments)
    }

    /// `PeripheralManager1.State`: the identifier's peripheral role.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`; `Failed` for an unreadable reply; unreachable.
    public func peripheralManagerState(_ identifier: String) async throws(RelinkClientError) -> PeripheralManagerRecord {
        let reply = try await peripheralManager(identifier, .state)
        return try Self.peripheralManagerRecord(try decode(reply, "State", String.self), "State")
    }

    /// The peripheral role's JSON (`State`, `Register`'s `peripheral_manager`), decoded.
    static func peripheralManagerRecord(_ json: String, _ what: String) throws(RelinkClientError) -> PeripheralManagerRecord {
        do { return try PeripheralManagerRecord(json: json) } catch { throw .badReply(what, "\(error)") }
    }
}
