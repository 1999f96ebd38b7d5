import BlueZ
import DBus
import Restoration
import RelinkModel

/// The client API's interfaces (docs/api/): each method validates its
/// arguments, learns the caller's user, and hands a request to the
/// daemon's loop; it replies after the loop committed what it changed.
struct APIInterfaces: Sendable {
    let daemon: Daemon
    let identity: CallerIdentity
    /// Largest `Write` value.
    static let writeLimit = 512
    /// What a call with the wrong signature gets (docs/api/errors.md).
    static let invalidArguments = DBusError.Name("org.relink.Error.InvalidArguments")
    /// Largest `Events` page.
    static let eventsLimit = 10_000

    private func method(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument] = [],
                        _ parse: @escaping @Sendable (ControlArguments) throws(ControlError) -> APIRequest) -> DBusMethod {
        let daemon = self.daemon, identity = self.identity
        return DBusMethod(name, in: inArgs, out: outArgs) { call in
            let request = try parse(try ControlArguments(call, count: inArgs.count))
            let caller = try await identity.caller(of: call)
            let result = try await daemon.submit(request, from: caller).get()
            if let delivery = result.delivery {
                call.afterReply { daemon.requestDelivery(delivery.id, to: caller.name, after: delivery.after) }
            }
            return result.values
        }
    }

    // MARK: Manager1

    var manager: DBusInterface {
        let daemon = self.daemon, identity = self.identity
        return DBusInterface(APIPaths.managerInterface, methods: [
            method("Register", [DBusArgument("identifier", .string), DBusArgument("options", .dictionary(key: .string, value: .variant))],
                   [DBusArgument("central", .objectPath), DBusArgument("restored", .dictionary(key: .string, value: .variant))]) { a throws(ControlError) in
                let id = try a.identifier(0)
                let o = try a.options(1, allowed: ["name_rule": .string, "replay": .boolean, "event_limit": .uint32])
                var rule: NamePreference?
                switch o["name_rule"] {
                case .string("gap")?: rule = .gapName
                case .string("advertising")?: rule = .advertisingName
                case nil: rule = nil
                default: throw .invalidArguments("name_rule must be gap or advertising")
                }
                var replay = true
                if case .boolean(let b)? = o["replay"] { replay = b }
                var eventLimit: Int?
                if case .uint32(let n)? = o["event_limit"] {
                    guard (1...StoreMapping.maximumEventLimit).contains(Int(n)) else {
                        throw .invalidArguments("event_limit must be 1...\(StoreMapping.maximumEventLimit), got \(n)")
                    }
                    eventLimit = Int(n)
                }
                return .register(id, nameRule: rule, replay: replay, eventLimit: eventLimit)
            },
            method("Unregister", [DBusArgument("identifier", .string)]) { a throws(ControlError) in .unregister(try a.identifier(0)) },
            method("ListIdentifiers", [], [DBusArgument("identifiers", .array(.structure([.string, .objectPath])))]) { _ throws(ControlError) in .listIdentifiers },
        ], properties: [
            DBusProperty("Version", .string),
            DBusProperty("Adapter", .string),
            DBusProperty("Ready", .boolean),
            DBusProperty("Discovering", .boolean, emitsChanged: false, getter: { call in
                try await daemon.submit(.status, from: try await identity.caller(of: call)).get().values.dropFirst().first ?? .boolean(false)
            }),
            DBusProperty("Status", .string, emitsChanged: false, getter: { call in
                try await daemon.submit(.status, from: try await identity.caller(of: call)).get().values.first ?? .string("{}")
            }),
        ], invalidSignatureError: Self.invalidArguments)
    }

    // MARK: Central1

    static let centralProperties: [DBusProperty] = [
        DBusProperty("Identifier", .string), DBusProperty("Owner", .uint32), DBusProperty("NameRule", .string),
        DBusProperty("Scanning", .boolean), DBusProperty("ScanServices", .array(.string)), DBusProperty("AllowDuplicates", .boolean),
        DBusProperty("LastSequence", .uint64), DBusProperty("Acknowledged", .uint64), DBusProperty("DroppedEvents", .uint64),
        DBusProperty("EventLimit", .uint32),
    ]

    /// The `Central1` interface of one identifier.
    func central(_ id: RestoreIdentifier) -> DBusInterface {
        let options = DBusType.dictionary(key: .string, value: .variant)
        let p = DBusArgument("peripheral", .string), service = DBusArgument("service", .string), characteristic = DBusArgument("characteristic", .string)
        let daemon = self.daemon, identity = self.identity
        /// Read and Write: the loop finds the characteristic; BlueZ is asked outside the loop.
        func gatt(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument],
                  _ parse: @escaping @Sendable (ControlArguments) throws(ControlError) -> (CharacteristicKey, PeripheralRef, [UInt8]?, Bool)) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs) { call in
                let (key, peripheral, value, withResponse) = try parse(try ControlArguments(call, count: inArgs.count))
                let caller = try await identity.caller(of: call)
                guard let path = try await daemon.submit(.locate(id, peripheral, key), from: caller).get().characteristic else {
                    throw ControlError.failed("the characteristic could not be located")
                }
                do {
                    if let value {
                        try await daemon.bluez.write(path, value, withResponse: withResponse)
                        return []
                    }
                    return [.array(.byte, try await daemon.bluez.read(path).map { .byte($0) })]
                } catch {
                    throw APIInterfaces.gattError(error, name)
                }
            }
        }
        return DBusInterface(APIPaths.centralInterface, methods: [
            method("Scan", [DBusArgument("services", .array(.string)), DBusArgument("options", options)]) { a throws(ControlError) in
                let o = try a.options(1, allowed: ["allow_duplicates": .boolean])
                var duplicates = false
                if case .boolean(let b)? = o["allow_duplicates"] { duplicates = b }
                return .scan(id, ScanIntent(services: try a.uuids(0, "services"), allowDuplicates: duplicates))
            },
            method("StopScan", []) { _ throws(ControlError) in .stopScan(id) },
            method("Connect", [p, DBusArgument("options", options)], [DBusArgument("object", .objectPath)]) { a throws(ControlError) in
                let (connectOptions, kind) = try a.connectRequest(1, timeoutKey: "timeout", allowAddressType: true)
                return .connect(id, try a.peripheral(0, kind: kind), connectOptions)
            },
            method("Cancel", [p]) { a throws(ControlError) in .cancel(id, try a.peripheral(0)) },
            method("Subscribe", [p, service, characteristic]) { a throws(ControlError) in .subscribe(id, try a.peripheral(0), try a.characteristic(1)) },
            method("Unsubscribe", [p, service, characteristic]) { a throws(ControlError) in .unsubscribe(id, try a.peripheral(0), try a.characteristic(1)) },
            gatt("Read", [p, service, characteristic], [DBusArgument("value", .array(.byte))]) { a throws(ControlError) in
                (try a.characteristic(1), try a.peripheral(0), nil, true)
            },
            gatt("Write", [p, service, characteristic, DBusArgument("value", .array(.byte)), DBusArgument("options", options)], []) { a throws(ControlError) in
                let key = try a.characteristic(1), peripheral = try a.peripheral(0)
                let value = try a.bytes(3, "value", limit: Self.writeLimit)
                let o = try a.options(4, allowed: ["with_response": .boolean])
                var withResponse = true
                if case .boolean(let b)? = o["with_response"] { withResponse = b }
                return (key, peripheral, value, withResponse)
            },
            method("Events", [DBusArgument("after", .uint64), DBusArgument("max", .uint32)],
                   [DBusArgument("events", .array(.structure([.uint64, .string, .string])))]) { a throws(ControlError) in
                let max = try a.uint32(1, "max")
                guard max >= 1, max <= Self.eventsLimit else { throw .invalidArguments("max must be 1 to \(Self.eventsLimit), got \(max)") }
                return .events(id, after: try a.uint64(0, "after"), max: Int(max))
            },
            method("Ack", [DBusArgument("sequence", .uint64)]) { a throws(ControlError) in .ack(id, through: try a.uint64(0, "sequence")) },
            method("Watch", [DBusArgument("after", .uint64)]) { a throws(ControlError) in .watch(id, after: try a.uint64(0, "after")) },
            method("Unwatch", []) { _ throws(ControlError) in .unwatch(id) },
        ], properties: Self.centralProperties, signals: [
            DBusSignal("Event", [DBusArgument("sequence", .uint64), DBusArgument("kind", .string), DBusArgument("payload", .string)]),
        ], invalidSignatureError: Self.invalidArguments)
    }

    /// A BlueZ failure of a read or write as the API's error.
    static func gattError(_ error: any Error, _ operation: String) -> ControlError {
        let failure = FailureMapping.failure(error)
        let text = "\(operation) failed: \(failure.errorName)\(failure.message.isEmpty ? "" : ": \(failure.message)")"
        switch failure.failureClass {
        case .notSupported: return .notSupported(text)
        case .notPermitted: return .notPermitted(text)
        case .inProgress: return .inProgress(text)
        case .notReady: return .notReady(text)
        case .deviceGone, .transient: return .notConnected(text)
        default: return .failed(text)
        }
    }

    // MARK: Peripheral1

    static let peripheral = DBusInterface(APIPaths.peripheralInterface, properties: [
        DBusProperty("Id", .string), DBusProperty("Address", .string), DBusProperty("AddressType", .string),
        DBusProperty("Adapter", .string), DBusProperty("AdvertisingName", .string), DBusProperty("AdvertisingNameSeen", .uint64),
        DBusProperty("GAPName", .string), DBusProperty("GAPNameSeen", .uint64), DBusProperty("Name", .string),
        DBusProperty("NameSource", .string), DBusProperty("Connected", .boolean), DBusProperty("RSSI", .int16),
        DBusProperty("Services", .array(.string)), DBusProperty("LastSeen", .uint64),
    ])
}
