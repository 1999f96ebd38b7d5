import BlueZ
import DBus
import RelinkAPI
import Restoration
import RelinkModel

/// The client API's interfaces (docs/api/): each method validates its
/// arguments, learns the caller's user, and hands a request to the
/// daemon's loop; it replies after the loop committed what it changed.
///
/// Every method is ``DBus/DBusMethod/ordered``: a caller's next call is
/// dispatched once this one's request is in the loop's inbox (which the
/// loop takes in order, each to its end), so a client's pipelined calls
/// are applied in the order it sent them. A read or write, which goes to
/// BlueZ outside the loop, holds the turn until its BlueZ call is queued
/// on relinkd's connection to bluetoothd (which takes them in order), or
/// until it is answered where no D-Bus call is made (a write stream, the
/// in-process fake); `OpenWriteStream`, `Pair`'s target check, `Unpair`
/// and `CancelWith` hold it until they are answered, never while a
/// pairing waits for the caller's `AnswerPairing`.
struct APIInterfaces: Sendable {
    let daemon: Daemon
    let identity: CallerIdentity
    /// What a call with the wrong signature gets (docs/api/errors.md).
    static let invalidArguments = DBusError.Name(RelinkErrorName.invalidArguments.rawValue)

    private func method(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument] = [],
                        _ parse: @escaping @Sendable (ControlArguments) throws(RelinkError) -> APIRequest) -> DBusMethod {
        let daemon = self.daemon, identity = self.identity
        return DBusMethod(name, in: inArgs, out: outArgs, ordered: true) { call in
            let request = try parse(try ControlArguments(call, count: inArgs.count))
            let caller = try await identity.caller(of: call)
            let result = try await daemon.submit(request, from: caller, queued: call.endTurn).get()
            if let delivery = result.delivery {
                call.afterReply { daemon.requestDelivery(delivery.id, to: caller.name, after: delivery.after) }
            }
            return result.values
        }
    }

    // MARK: Manager1

    var manager: DBusInterface {
        let daemon = self.daemon, identity = self.identity
        return DBusInterface(RelinkNames.manager, methods: [
            registerMethod,
            setLaunchMethod,
            method(Manager1Member.unregister.rawValue, [DBusArgument("identifier", .string)]) { a throws(RelinkError) in .unregister(try a.identifier(0)) },
            method(Manager1Member.listIdentifiers.rawValue, [], [DBusArgument("identifiers", .array(.structure([.string, .objectPath])))]) { _ throws(RelinkError) in .listIdentifiers },
        ], properties: [
            DBusProperty(Manager1Property.version.rawValue, .string, constant: true),
            DBusProperty(Manager1Property.adapter.rawValue, .string, constant: true),
            DBusProperty(Manager1Property.ready.rawValue, .boolean),
            DBusProperty(Manager1Property.adapterState.rawValue, .string),
            DBusProperty(Manager1Property.adapterRoles.rawValue, .array(.string)),
            // Both from a snapshot the loop hands over in constant time; the
            // Status document is made off the loop (Core/StatusSnapshot.swift).
            DBusProperty(Manager1Property.discovering.rawValue, .boolean, emitsChanged: false, getter: { _ in
                guard let snapshot = await daemon.statusSnapshot() else { throw RelinkError(.failed, "relinkd is stopping") }
                return .boolean(snapshot.discovering)
            }),
            DBusProperty(Manager1Property.status.rawValue, .string, emitsChanged: false, getter: { call in
                .string(try await daemon.statusJSON(for: try await identity.caller(of: call)))
            }),
        ], invalidSignatureError: Self.invalidArguments)
    }

    // MARK: Central1

    static let centralProperties: [DBusProperty] = [
        DBusProperty(Central1Property.identifier.rawValue, .string, constant: true), DBusProperty(Central1Property.owner.rawValue, .uint32, constant: true), DBusProperty(Central1Property.nameRule.rawValue, .string),
        DBusProperty(Central1Property.scanning.rawValue, .boolean), DBusProperty(Central1Property.scanServices.rawValue, .array(.string)), DBusProperty(Central1Property.allowDuplicates.rawValue, .boolean),
        DBusProperty(Central1Property.scanOptions.rawValue, .dictionary(key: .string, value: .variant)),
        DBusProperty(Central1Property.lastSequence.rawValue, .uint64), DBusProperty(Central1Property.acknowledged.rawValue, .uint64), DBusProperty(Central1Property.droppedEvents.rawValue, .uint64),
        DBusProperty(Central1Property.eventLimit.rawValue, .uint32),
    ]

    /// The `Central1` interface of one identifier.
    func central(_ id: RestoreIdentifier) -> DBusInterface {
        let options = DBusType.dictionary(key: .string, value: .variant)
        let p = DBusArgument("peripheral", .string), service = DBusArgument("service", .string), characteristic = DBusArgument("characteristic", .string)
        let daemon = self.daemon, identity = self.identity
        /// Read and Write: the loop finds the characteristic; BlueZ is asked outside the loop.
        func gatt(_ name: String, _ inArgs: [DBusArgument], _ outArgs: [DBusArgument],
                  _ parse: @escaping @Sendable (ControlArguments) throws(RelinkError) -> (CharacteristicKey, PeripheralRef, [UInt8]?, Bool)) -> DBusMethod {
            DBusMethod(name, in: inArgs, out: outArgs, ordered: true) { call in
                let (key, peripheral, value, withResponse) = try parse(try ControlArguments(call, count: inArgs.count))
                let caller = try await identity.caller(of: call)
                guard let path = try await daemon.submit(.locate(id, peripheral, key), from: caller).get().characteristic else {
                    throw RelinkError(.failed, "the characteristic could not be located")
                }
                do {
                    if let value {
                        try await daemon.checkWriteLength(value.count, withResponse: withResponse, characteristic: path)
                        if !withResponse, let stream = await daemon.writeStream(at: path, key) {
                            try stream.write(value)  // BlueZ refuses WriteValue while the stream holds its socket
                            return []
                        }
                        try await daemon.pairingOnDemand(id, peripheral, from: caller, operation: name, beforePairing: call.endTurn) {
                            try await CallQueued.whenQueued(call.endTurn) { try await daemon.bluez.write(path, value, withResponse: withResponse) }
                        }
                        return []
                    }
                    let read = try await daemon.pairingOnDemand(id, peripheral, from: caller, operation: name, beforePairing: call.endTurn) {
                        try await CallQueued.whenQueued(call.endTurn) { try await daemon.bluez.read(path) }
                    }
                    return [.array(.byte, read.map { .byte($0) })]
                } catch let error as RelinkError {
                    throw error
                } catch {
                    throw APIInterfaces.gattError(error, name)
                }
            }
        }
        let openWriteStream = DBusMethod(Central1Member.openWriteStream.rawValue, in: [p, service, characteristic],
                                         out: [DBusArgument("stream", .objectPath), DBusArgument("maximum_length", .uint16)], ordered: true) { call in
            let a = try ControlArguments(call, count: 3)
            let key = try a.characteristic(1), peripheral = try a.peripheral(0)
            let caller = try await identity.caller(of: call)
            guard let path = try await daemon.submit(.locate(id, peripheral, key), from: caller).get().characteristic else {
                throw RelinkError(.failed, "the characteristic could not be located")
            }
            let stream = try await daemon.openWriteStream(id, key: key, characteristic: path, owner: caller.name, uid: caller.uid)
            return [.objectPath(stream.path), .uint16(UInt16(stream.limits?.withoutResponse ?? 0))]
        }
        return DBusInterface(RelinkNames.central, methods: [
            method(Central1Member.scan.rawValue, [DBusArgument("services", .array(.string)), DBusArgument("options", options)]) { a throws(RelinkError) in
                var allowed: [String: DBusType] = ["allow_duplicates": .boolean]
                for (kind, key) in DataPrefixOptions.scanKeys { allowed[key] = DataPrefixOptions.type(of: kind) }
                let o = try a.options(1, allowed: allowed)
                var duplicates = false
                if case .boolean(let b)? = o["allow_duplicates"] { duplicates = b }
                return .scan(id, ScanIntent(services: try a.uuids(0, "services"), allowDuplicates: duplicates,
                                            dataPrefixes: try DataPrefixOptions.prefixes(in: o, keys: DataPrefixOptions.scanKeys)))
            },
            method(Central1Member.stopScan.rawValue, []) { _ throws(RelinkError) in .stopScan(id) },
            method(Central1Member.connect.rawValue, [p, DBusArgument("options", options)], [DBusArgument("object", .objectPath)]) { a throws(RelinkError) in
                let (connectOptions, kind) = try a.connectRequest(1, timeoutKey: "timeout", allowAddressType: true)
                return .connect(id, try a.peripheral(0, kind: kind), connectOptions)
            },
            method(Central1Member.cancel.rawValue, [p]) { a throws(RelinkError) in .cancel(id, try a.peripheral(0)) },
            method(Central1Member.subscribe.rawValue, [p, service, characteristic]) { a throws(RelinkError) in .subscribe(id, try a.peripheral(0), try a.characteristic(1)) },
            method(Central1Member.unsubscribe.rawValue, [p, service, characteristic]) { a throws(RelinkError) in .unsubscribe(id, try a.peripheral(0), try a.characteristic(1)) },
            gatt(Central1Member.read.rawValue, [p, service, characteristic], [DBusArgument("value", .array(.byte))]) { a throws(RelinkError) in
                (try a.characteristic(1), try a.peripheral(0), nil, true)
            },
            gatt(Central1Member.write.rawValue, [p, service, characteristic, DBusArgument("value", .array(.byte)), DBusArgument("options", options)], []) { a throws(RelinkError) in
                let key = try a.characteristic(1), peripheral = try a.peripheral(0)
                let value = try a.bytes(3, "value", limit: APILimits.maximumWriteArgumentBytes)
                let o = try a.options(4, allowed: ["with_response": .boolean])
                var withResponse = true
                if case .boolean(let b)? = o["with_response"] { withResponse = b }
                return (key, peripheral, value, withResponse)
            },
            openWriteStream,
            method(Central1Member.events.rawValue, [DBusArgument("after", .uint64), DBusArgument("max", .uint32)],
                   [DBusArgument("events", .array(.structure([.uint64, .string, .string])))]) { a throws(RelinkError) in
                let max = try a.uint32(1, "max")
                guard max >= 1, max <= Int(APILimits.maximumEventsPage) else { throw RelinkError(.invalidArguments, "max must be 1 to \(Int(APILimits.maximumEventsPage)), got \(max)") }
                return .events(id, after: try a.uint64(0, "after"), max: Int(max))
            },
            method(Central1Member.ack.rawValue, [DBusArgument("sequence", .uint64)]) { a throws(RelinkError) in .ack(id, through: try a.uint64(0, "sequence")) },
            method(Central1Member.watch.rawValue, [DBusArgument("after", .uint64)]) { a throws(RelinkError) in .watch(id, after: try a.uint64(0, "after")) },
            method(Central1Member.unwatch.rawValue, []) { _ throws(RelinkError) in .unwatch(id) },
        ] + gattMethods(id) + transferMethods(id) + pairingMethods(id) + pairingRequestMethods(id), properties: Self.centralProperties, signals: [
            DBusSignal(Central1Member.event.rawValue, [DBusArgument("sequence", .uint64), DBusArgument("kind", .string), DBusArgument("payload", .string)]),
        ], invalidSignatureError: Self.invalidArguments)
    }

    // MARK: WriteStream1

    /// The `WriteStream1` interface of one stream: `Write` is answered
    /// inline, in bus order, with no hop to the daemon's loop; only the
    /// stream's opener may call it (anyone else gets `UnknownObject`, as
    /// for an object that is not there).
    func writeStream(_ stream: WriteStream) -> DBusInterface {
        let daemon = self.daemon
        @Sendable func opener(_ call: MethodCall) throws(DBusError) {
            guard call.sender == stream.owner else { throw DBusError(.unknownObject, "no object at \(stream.path)") }
        }
        return DBusInterface(RelinkNames.writeStream, methods: [
            DBusMethod.inline(WriteStream1Member.write.rawValue, in: [DBusArgument("value", .array(.byte))], { call in
                try opener(call)
                guard case .array(.byte, let items)? = call.arguments.first else { throw RelinkError(.invalidArguments, "value must be ay") }
                try stream.write(items.map { if case .byte(let b) = $0 { b } else { 0 } })
                return []
            }),
            DBusMethod.inline(WriteStream1Member.close.rawValue, { call in
                try opener(call)
                stream.close()
                Task { await daemon.closeWriteStream(stream.path) }
                return []
            }),
        ], properties: [
            DBusProperty(WriteStream1Property.peripheral.rawValue, .string, constant: true), DBusProperty(WriteStream1Property.service.rawValue, .string, constant: true),
            DBusProperty(WriteStream1Property.characteristic.rawValue, .string, constant: true),
            DBusProperty(WriteStream1Property.maximumLength.rawValue, .uint16, emitsChanged: false, getter: { _ in .uint16(UInt16(stream.limits?.withoutResponse ?? 0)) }),
            DBusProperty(WriteStream1Property.transport.rawValue, .string, constant: true),
        ], signals: [
            DBusSignal(WriteStream1Member.readyToWrite.rawValue, []),
        ], invalidSignatureError: Self.invalidArguments)
    }

    /// A BlueZ failure of a read or write as the API's error.
    static func gattError(_ error: any Error, _ operation: String) -> RelinkError {
        let failure = FailureMapping.failure(error)
        let text = "\(operation) failed: \(failure.errorName)\(failure.message.isEmpty ? "" : ": \(failure.message)")"
        // The peripheral's ATT 0x0D (Invalid Attribute Value Length), as
        // BlueZ names it: the value is too long for this characteristic,
        // which may take less than the link's largest value.
        if FailureMapping.isLengthRefusal(failure) {
            return RelinkError(.valueTooLong, "\(text) (the peripheral refused the value's length)")
        }
        switch failure.failureClass {
        case .notSupported: return RelinkError(.notSupported, text)
        case .notPermitted: return RelinkError(.notPermitted, text)
        case .inProgress: return RelinkError(.inProgress, text)
        case .notReady: return RelinkError(.notReady, text)
        case .deviceGone, .transient: return RelinkError(.notConnected, text)
        default: return RelinkError(.failed, text)
        }
    }

    // MARK: Peripheral1

    static let peripheral = DBusInterface(RelinkNames.peripheral, properties: [
        DBusProperty(Peripheral1Property.id.rawValue, .string, constant: true), DBusProperty(Peripheral1Property.address.rawValue, .string), DBusProperty(Peripheral1Property.addressType.rawValue, .string),
        DBusProperty(Peripheral1Property.adapter.rawValue, .string), DBusProperty(Peripheral1Property.advertisingName.rawValue, .string), DBusProperty(Peripheral1Property.advertisingNameSeen.rawValue, .uint64),
        DBusProperty(Peripheral1Property.gapName.rawValue, .string), DBusProperty(Peripheral1Property.gapNameSeen.rawValue, .uint64), DBusProperty(Peripheral1Property.name.rawValue, .string),
        DBusProperty(Peripheral1Property.nameSource.rawValue, .string), DBusProperty(Peripheral1Property.connected.rawValue, .boolean), DBusProperty(Peripheral1Property.rssi.rawValue, .int16),
        DBusProperty(Peripheral1Property.services.rawValue, .array(.string)), DBusProperty(Peripheral1Property.lastSeen.rawValue, .uint64),
        DBusProperty(Peripheral1Property.mtu.rawValue, .uint16), DBusProperty(Peripheral1Property.maximumWriteWithResponse.rawValue, .uint16),
        DBusProperty(Peripheral1Property.maximumWriteWithoutResponse.rawValue, .uint16),
        DBusProperty(Peripheral1Property.paired.rawValue, .boolean), DBusProperty(Peripheral1Property.bonded.rawValue, .boolean),
        DBusProperty(Peripheral1Property.trusted.rawValue, .boolean),
    ])
}
