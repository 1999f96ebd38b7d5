public import DBus
import RelinkModel

/// `org.bluez.LEAdvertisement1`, the interface of an advertisement object.
let leAdvertisementInterface = "org.bluez.LEAdvertisement1"

/// A BlueZ error reply for an ATT error (``ATTError/bluezErrorName``).
struct ATTReplyError: DBusErrorConvertible {
    let error: ATTError
    var dbusError: DBusError { DBusError(DBusError.Name(error.bluezErrorName), "ATT error \(error.rawValue) (0x\(String(error.code, radix: 16)))") }
}

extension HostedApplication {
    /// The objects bluetoothd reads, in export order (services, their
    /// characteristics, their descriptors; then the advertisement).
    func objects(handler: @escaping HostedRequestHandler) throws(DBusError) -> [ExportedObject] {
        var objects: [ExportedObject] = []
        let root = self.root
        for (s, service) in services.enumerated() {
            let includes = service.includedServices.compactMap { uuid in services.firstIndex { $0.uuid == uuid }.map { servicePath($0) } }
            objects.append(try ExportedObject(path: servicePath(s), interfaces: [Self.serviceInterface], values: [
                BlueZInterface.gattService: [
                    "UUID": .string(service.uuid.string), "Primary": .boolean(service.isPrimary),
                    "Includes": .array(.objectPath, includes.map { .objectPath($0) }),
                ],
            ]))
            for (c, characteristic) in service.characteristics.enumerated() {
                let key = CharacteristicKey(service: service.uuid, characteristic: characteristic.uuid)
                var values: [String: DBusValue] = [
                    "UUID": .string(characteristic.uuid.string), "Service": .objectPath(servicePath(s)),
                    "Flags": .array(.string, characteristic.bluezFlags.map { .string($0) }),
                ]
                if let value = characteristic.value { values["Value"] = .array(.byte, value.map { .byte($0) }) }
                objects.append(try ExportedObject(path: characteristicPath(s, c), interfaces: [Self.characteristicInterface(
                    key, onlyWithoutResponse: characteristic.onlyWithoutResponse, root: root, handler: handler)],
                                                  values: [BlueZInterface.gattCharacteristic: values]))
                for (d, descriptor) in characteristic.descriptors.enumerated() {
                    objects.append(try ExportedObject(path: descriptorPath(s, c, d), interfaces: [Self.descriptorInterface(descriptor.value)], values: [
                        BlueZInterface.gattDescriptor: [
                            "UUID": .string(descriptor.uuid.string), "Characteristic": .objectPath(characteristicPath(s, c)),
                            "Flags": .array(.string, descriptor.bluezFlags.map { .string($0) }),
                        ],
                    ]))
                }
            }
        }
        if let advertisement {
            objects.append(try ExportedObject(path: advertisementPath, interfaces: [Self.advertisementInterface(root: root, handler: handler)],
                                              values: [leAdvertisementInterface: Self.advertisementValues(advertisement)]))
        }
        return objects
    }

    static let serviceInterface = DBusInterface(BlueZInterface.gattService, properties: [
        DBusProperty("UUID", .string, constant: true), DBusProperty("Primary", .boolean, constant: true),
        DBusProperty("Includes", .array(.objectPath), constant: true),
    ])

    static func characteristicInterface(_ key: CharacteristicKey, onlyWithoutResponse: Bool, root: ObjectPath,
                                        handler: @escaping HostedRequestHandler) -> DBusInterface {
        let options = DBusArgument("options", .dictionary(key: .string, value: .variant))
        return DBusInterface(BlueZInterface.gattCharacteristic, methods: [
            DBusMethod("ReadValue", in: [options], out: [DBusArgument("value", .array(.byte))]) { call in
                switch await handler(root, Self.readRequest(key, options: call.arguments.first)) {
                case .value(let bytes): return [.array(.byte, bytes.map { .byte($0) })]
                case .done: return [.array(.byte, [])]
                case .error(let error): throw ATTReplyError(error: error)
                }
            },
            DBusMethod("WriteValue", in: [DBusArgument("value", .array(.byte)), options]) { call in
                guard let request = Self.writeRequest(key, onlyWithoutResponse: onlyWithoutResponse,
                                                        noReplyExpected: call.message.noReplyExpected, arguments: call.arguments) else {
                    throw ATTReplyError(error: .invalidAttributeValueLength)
                }
                switch await handler(root, request) {
                case .value, .done: return []
                case .error(let error): throw ATTReplyError(error: error)
                }
            },
            DBusMethod("StartNotify") { _ in
                if case .error(let error) = await handler(root, .startNotify(key, central: PeripheralManagerRecord.unnamedCentral)) {
                    throw ATTReplyError(error: error)
                }
                return []
            },
            DBusMethod("StopNotify") { _ in
                _ = await handler(root, .stopNotify(key, central: PeripheralManagerRecord.unnamedCentral))
                return []
            },
        ], properties: [
            DBusProperty("UUID", .string, constant: true), DBusProperty("Service", .objectPath, constant: true),
            DBusProperty("Flags", .array(.string), constant: true), DBusProperty("Value", .array(.byte)),
        ])
    }

    static func descriptorInterface(_ value: [UInt8]) -> DBusInterface {
        DBusInterface(BlueZInterface.gattDescriptor, methods: [
            DBusMethod("ReadValue", in: [DBusArgument("options", .dictionary(key: .string, value: .variant))], out: [DBusArgument("value", .array(.byte))]) { call in
                let offset = Self.offset(Self.options(call.arguments.first))
                guard offset <= value.count else { throw ATTReplyError(error: .invalidOffset) }
                return [.array(.byte, value[offset...].map { .byte($0) })]
            },
        ], properties: [
            DBusProperty("UUID", .string, constant: true), DBusProperty("Characteristic", .objectPath, constant: true),
            DBusProperty("Flags", .array(.string), constant: true),
        ])
    }

    static func advertisementInterface(root: ObjectPath, handler: @escaping HostedRequestHandler) -> DBusInterface {
        DBusInterface(leAdvertisementInterface, methods: [
            DBusMethod("Release") { _ in
                _ = await handler(root, .advertisementReleased)
                return []
            },
        ], properties: [
            DBusProperty("Type", .string), DBusProperty("ServiceUUIDs", .array(.string)),
            DBusProperty("ManufacturerData", .dictionary(key: .uint16, value: .variant)),
            DBusProperty("ServiceData", .dictionary(key: .string, value: .variant)),
            DBusProperty("LocalName", .string), DBusProperty("Appearance", .uint16),
            DBusProperty("Includes", .array(.string)), DBusProperty("Discoverable", .boolean),
        ])
    }

    /// `LEAdvertisement1`'s properties for an advertisement.
    static func advertisementValues(_ ad: PeripheralAdvertisement) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "Type": .string(ad.connectable ? "peripheral" : "broadcast"),
            "ServiceUUIDs": .array(.string, ad.serviceUUIDs.map { .string($0.string) }),
            "ManufacturerData": ad.data.dbusManufacturerData,
            "ServiceData": ad.data.dbusServiceData,
            "Includes": .array(.string, ad.includeTxPower ? [.string("tx-power")] : []),
            "Discoverable": .boolean(ad.advertisedDiscoverable),
        ]
        if let name = ad.localName { values["LocalName"] = .string(name) }
        if let appearance = ad.data.appearance { values["Appearance"] = .uint16(appearance) }
        return values
    }

    static func options(_ value: DBusValue?) -> [String: DBusValue] {
        guard case .dictionary(_, _, let entries)? = value?.unwrapped else { return [:] }
        var options: [String: DBusValue] = [:]
        for entry in entries { if let key = entry.key.stringValue { options[key] = entry.value.unwrapped } }
        return options
    }

    /// A `ReadValue` call's request, from its options.
    static func readRequest(_ key: CharacteristicKey, options: DBusValue?) -> HostedRequest {
        let o = Self.options(options)
        return .read(key, offset: Self.offset(o), central: centralName(o), mtu: Self.mtu(o))
    }

    /// A `WriteValue` call's request, from its value and options (nil
    /// when the first argument is not a byte array). The kind comes from the
    /// `type` option (``WriteKind/init(option:onlyWithoutResponse:)``), and
    /// is `command` whenever the call expects no reply: bluetoothd passes no
    /// `type` and, for a characteristic with `write-without-response`,
    /// answers the central itself and calls without waiting for relinkd,
    /// whatever the central sent (docs/real-bluez.md, difference 27).
    static func writeRequest(_ key: CharacteristicKey, onlyWithoutResponse: Bool, noReplyExpected: Bool = false,
                             arguments: [DBusValue]) -> HostedRequest? {
        guard case .array(_, let items)? = arguments.first else { return nil }
        let value = items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
        let o = Self.options(arguments.dropFirst().first)
        let kind = noReplyExpected ? .command : WriteKind(option: o["type"]?.stringValue, onlyWithoutResponse: onlyWithoutResponse)
        return .write(key, value: value, offset: Self.offset(o), kind: kind, central: centralName(o), mtu: Self.mtu(o))
    }

    /// The `mtu` option (bluetoothd: the ATT MTU of the central's link).
    static func mtu(_ options: [String: DBusValue]) -> Int? {
        if case .uint16(let n)? = options["mtu"] { return Int(n) }
        return nil
    }

    static func offset(_ options: [String: DBusValue]) -> Int {
        if case .uint16(let n)? = options["offset"] { return Int(n) }
        return 0
    }
}
