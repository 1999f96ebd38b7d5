import DBus
import RelinkAPI
import RelinkModel

// Central1's GATT database and descriptor methods, the retrieval of peripherals, and connection events.
extension APIInterfaces {
    /// `RetrievePeripherals`, `RetrieveConnectedPeripherals`,
    /// `RegisterForConnectionEvents`, `UnregisterForConnectionEvents`, `GattDatabase`,
    /// `ReadDescriptor` and `WriteDescriptor` of one identifier.
    func gattMethods(_ id: RestoreIdentifier) -> [DBusMethod] {
        let p = DBusArgument("peripheral", .string), service = DBusArgument("service", .string)
        let characteristic = DBusArgument("characteristic", .string), descriptor = DBusArgument("descriptor", .string)
        let daemon = self.daemon, identity = self.identity
        /// Read and write: the loop finds the descriptor; BlueZ is asked outside the loop.
        func descriptorMethod(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument],
                              _ parse: @escaping @Sendable (ControlArguments) throws(RelinkError) -> (PeripheralRef, DescriptorKey, [UInt8]?)) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs, ordered: true) { call in
                let (peripheral, key, value) = try parse(try ControlArguments(call, count: inArgs.count))
                let caller = try await identity.caller(of: call)
                guard let path = try await daemon.submit(.locateDescriptor(id, peripheral, key, forWriting: value != nil), from: caller).get().characteristic else {
                    throw RelinkError(.failed, "the descriptor could not be located")
                }
                do {
                    if let value {
                        try await daemon.pairingOnDemand(id, peripheral, from: caller, operation: name, beforePairing: call.endTurn) {
                            try await CallQueued.whenQueued(call.endTurn) { try await daemon.bluez.writeDescriptor(path, value) }
                        }
                        return []
                    }
                    let read = try await daemon.pairingOnDemand(id, peripheral, from: caller, operation: name, beforePairing: call.endTurn) {
                        try await CallQueued.whenQueued(call.endTurn) { try await daemon.bluez.readDescriptor(path) }
                    }
                    return [.array(.byte, read.map { .byte($0) })]
                } catch {
                    throw APIInterfaces.gattError(error, name)
                }
            }
        }
        return [
            DBusMethod(Central1Member.retrievePeripherals.rawValue, in: [DBusArgument("peripherals", .array(.string))],
                       out: [DBusArgument("found", .array(Daemon.retrievedEntryType))], ordered: true) { call in
                let texts = try ControlArguments(call, count: 1).strings(0, "peripherals", atMost: APILimits.maximumRetrieved)
                let refs = try texts.map { text throws(RelinkError) in try ControlArguments.peripheral(text) }
                let request = APIRequest.retrievePeripherals(id, refs)
                return try await daemon.submit(request, from: try await identity.caller(of: call), queued: call.endTurn).get().values
            },
            DBusMethod(Central1Member.retrieveConnectedPeripherals.rawValue, in: [DBusArgument("services", .array(.string))],
                       out: [DBusArgument("found", .array(Daemon.retrievedEntryType))], ordered: true) { call in
                let a = try ControlArguments(call, count: 1)
                let request = APIRequest.retrieveConnectedPeripherals(id, try a.uuids(0, "services"))
                return try await daemon.submit(request, from: try await identity.caller(of: call), queued: call.endTurn).get().values
            },
            DBusMethod(Central1Member.registerForConnectionEvents.rawValue, in: [DBusArgument("options", APIInterfaces.optionsType)], out: [],
                       ordered: true) { call in
                let o = try ControlArguments(call, count: 1).options(0, allowed: ["services": .array(.string), "peripherals": .array(.string)])
                let services = try ControlArguments(values: [o["services"] ?? .array(.string, [])]).uuids(0, "services")
                let texts = try ControlArguments(values: [o["peripherals"] ?? .array(.string, [])])
                    .strings(0, "peripherals", atMost: APILimits.maximumConnectionEventPeripherals)
                let refs = try texts.map { text throws(RelinkError) in try ControlArguments.peripheral(text) }
                let request = APIRequest.registerForConnectionEvents(id, services: services, peripherals: refs)
                return try await daemon.submit(request, from: try await identity.caller(of: call), queued: call.endTurn).get().values
            },
            DBusMethod(Central1Member.unregisterForConnectionEvents.rawValue, in: [], out: [], ordered: true) { call in
                _ = try ControlArguments(call, count: 0)
                let request = APIRequest.unregisterForConnectionEvents(id)
                return try await daemon.submit(request, from: try await identity.caller(of: call), queued: call.endTurn).get().values
            },
            DBusMethod(Central1Member.gattDatabase.rawValue, in: [p], out: [DBusArgument("database", .string)], ordered: true) { call in
                let a = try ControlArguments(call, count: 1)
                let request = APIRequest.gattDatabase(id, try a.peripheral(0))
                return try await daemon.submit(request, from: try await identity.caller(of: call), queued: call.endTurn).get().values
            },
            descriptorMethod(Central1Member.readDescriptor.rawValue, [p, service, characteristic, descriptor], [DBusArgument("value", .array(.byte))]) { a throws(RelinkError) in
                (try a.peripheral(0), try a.descriptor(1), nil)
            },
            descriptorMethod(Central1Member.writeDescriptor.rawValue, [p, service, characteristic, descriptor, DBusArgument("value", .array(.byte))], []) { a throws(RelinkError) in
                (try a.peripheral(0), try a.descriptor(1), try a.bytes(4, "value", limit: APILimits.maximumWriteBytes))
            },
        ]
    }
}

extension ControlArguments {
    /// A service, characteristic and descriptor UUID at `index`, `index + 1` and `index + 2`.
    func descriptor(_ index: Int) throws(RelinkError) -> DescriptorKey {
        DescriptorKey(characteristic: try characteristic(index), descriptor: try uuid(index + 2, "descriptor"))
    }
}
