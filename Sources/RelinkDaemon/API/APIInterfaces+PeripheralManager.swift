import DBus
import RelinkAPI
import RelinkModel

// PeripheralManager1: the peripheral role of one identifier.
extension APIInterfaces {
    /// The `PeripheralManager1` interface of one identifier.
    func peripheralManager(_ id: RestoreIdentifier) -> DBusInterface {
        let daemon = self.daemon, identity = self.identity
        func call(_ name: PeripheralManager1Member, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument] = [],
                  _ parse: @escaping @Sendable (ControlArguments) throws(RelinkError) -> PeripheralManagerRequest) -> DBusMethod {
            DBusMethod(name.rawValue, in: inArgs, out: outArgs, ordered: true) { call in
                let request = try parse(try ControlArguments(call, count: inArgs.count))
                let caller = try await identity.caller(of: call)
                return try await daemon.submit(.peripheralManager(id, request), from: caller, queued: call.endTurn).get().values
            }
        }
        let request = DBusArgument("request", .uint64)
        return DBusInterface(RelinkNames.peripheralManager, methods: [
            call(.addService, [DBusArgument("service", .string)]) { a throws(RelinkError) in
                let text = try a.string(0, "service")
                do throws(DomainError) { return .addService(try PublishedService(json: text)) } catch { throw RelinkError(.invalidArguments, error.description) }
            },
            call(.removeService, [DBusArgument("uuid", .string)]) { a throws(RelinkError) in .removeService(try a.uuid(0, "uuid")) },
            call(.removeAllServices, []) { _ throws(RelinkError) in .removeAllServices },
            call(.startAdvertising, [DBusArgument("advertisement", .string)]) { a throws(RelinkError) in
                let text = try a.string(0, "advertisement")
                do throws(DomainError) { return .startAdvertising(try PeripheralAdvertisement(json: text)) } catch {
                    throw RelinkError(.invalidArguments, error.description)
                }
            },
            call(.stopAdvertising, []) { _ throws(RelinkError) in .stopAdvertising },
            call(.respond, [request, DBusArgument("value", .array(.byte))]) { a throws(RelinkError) in
                .respond(UInt64(try a.uint64(0, "request")), try a.bytes(1, "value", limit: maximumAttributeValueBytes))
            },
            call(.respondWithError, [request, DBusArgument("error", .string)]) { a throws(RelinkError) in
                let name = try a.string(1, "error")
                guard let error = ATTError(rawValue: name) else {
                    throw RelinkError(.invalidArguments, "error must be one of \(ATTError.allCases.map(\.rawValue).joined(separator: ", ")), got \(DomainError.echo(name))")
                }
                return .respondWithError(UInt64(try a.uint64(0, "request")), error)
            },
            call(.updateValue, [DBusArgument("service", .string), DBusArgument("characteristic", .string), DBusArgument("value", .array(.byte))]) { a throws(RelinkError) in
                .updateValue(try a.characteristic(0), try a.bytes(2, "value", limit: maximumAttributeValueBytes))
            },
            call(.updateValues, [DBusArgument("service", .string), DBusArgument("characteristic", .string),
                                 DBusArgument("values", .array(.array(.byte)))], [DBusArgument("accepted", .uint32)]) { a throws(RelinkError) in
                .updateValues(try a.characteristic(0), try a.byteArrays(2, "values", count: 1...maximumUpdateBatch, limit: maximumAttributeValueBytes))
            },
            call(.state, [], [DBusArgument("state", .string)]) { _ throws(RelinkError) in .state },
        ], invalidSignatureError: Self.invalidArguments)
    }
}
