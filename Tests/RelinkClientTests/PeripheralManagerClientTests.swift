import DBus
import RelinkAPI
import RelinkClient
import RelinkModel
import Testing

/// `RelinkPeripheralManager`'s wire: each `PeripheralManager1` call's
/// arguments (and what is refused before sending), the peripheral role's
/// events and the restored `peripheral_manager`.
@Suite struct PeripheralManagerClientTests {
    static let service = BluetoothUUID(shortValue: 0x180F)
    static let level = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A19))

    func name(_ body: () throws -> Void) -> RelinkClientError.Name? {
        do { try body(); return nil } catch { return (error as? RelinkClientError)?.name ?? .init("not a RelinkClientError") }
    }

    @Test func eachCallIsEncodedAsTheInterfaceTakesIt() throws {
        let published = PublishedService(uuid: Self.service, characteristics: [
            PublishedCharacteristic(uuid: Self.level.characteristic, properties: [.read, .notify], permissions: .readable, cacheable: true),
        ])
        let addArgs = try RelinkPeripheralManagerCall.addService(published).arguments()
        #expect(RelinkPeripheralManagerCall.addService(published).member == .addService)
        guard case .string(let serviceJSON)? = addArgs.first, addArgs.count == 1 else { Issue.record("AddService(s)"); return }
        #expect(try PublishedService(json: serviceJSON) == published, "relinkd reads back the same service")

        let ad = PeripheralAdvertisement(localName: "S", serviceUUIDs: [Self.service], data: AdvertisingData(manufacturerData: [76: [2, 21]]))
        guard case .string(let adJSON)? = try RelinkPeripheralManagerCall.startAdvertising(ad).arguments().first else {
            Issue.record("StartAdvertising(s)"); return
        }
        #expect(try PeripheralAdvertisement(json: adJSON) == ad)
        #expect(adJSON.contains(#""manufacturerData":[{"company":76,"data":[2,21]}]"#), "the documented JSON form")

        #expect(try RelinkPeripheralManagerCall.removeService(Self.service).arguments() == [.string("0000180f-0000-1000-8000-00805f9b34fb")])
        #expect(try RelinkPeripheralManagerCall.respond(request: 7, value: [1, 2]).arguments() == [.uint64(7), .array(.byte, [.byte(1), .byte(2)])])
        #expect(try RelinkPeripheralManagerCall.respondWithError(request: 7, error: .invalidOffset).arguments()
                == [.uint64(7), .string("invalidOffset")])
        #expect(try RelinkPeripheralManagerCall.updateValue(Self.level, value: [9]).arguments() == [
            .string("0000180f-0000-1000-8000-00805f9b34fb"), .string("00002a19-0000-1000-8000-00805f9b34fb"), .array(.byte, [.byte(9)]),
        ])
        #expect(try RelinkPeripheralManagerCall.updateValues(Self.level, values: [[9], []]).arguments() == [
            .string("0000180f-0000-1000-8000-00805f9b34fb"), .string("00002a19-0000-1000-8000-00805f9b34fb"),
            .array(.array(.byte), [.array(.byte, [.byte(9)]), .array(.byte, [])]),
        ])
        for call in [RelinkPeripheralManagerCall.removeAllServices, .stopAdvertising, .state] { #expect(try call.arguments().isEmpty) }
        #expect(Set([RelinkPeripheralManagerCall.removeAllServices, .stopAdvertising, .state, .respond(request: 1, value: []),
                     .respondWithError(request: 1, error: .unlikelyError), .updateValue(Self.level, value: []),
                     .updateValues(Self.level, values: [[]]), .removeService(Self.service), .addService(published), .startAdvertising(ad)].map(\.member)) == Set(PeripheralManager1Member.allCases),
                "every member of the interface has its call")
    }

    @Test func badArgumentsAreRefusedBeforeAnythingIsSent() {
        let tooLong = Array(repeating: UInt8(1), count: 513)
        #expect(name { _ = try RelinkPeripheralManagerCall.respond(request: 1, value: tooLong).arguments() } == .invalidArguments)
        #expect(name { _ = try RelinkPeripheralManagerCall.updateValue(Self.level, value: tooLong).arguments() } == .invalidArguments)
        #expect(name { _ = try RelinkPeripheralManagerCall.updateValues(Self.level, values: [[1], tooLong]).arguments() } == .invalidArguments)
        #expect(name { _ = try RelinkPeripheralManagerCall.updateValues(Self.level, values: []).arguments() } == .invalidArguments)
        #expect(name { _ = try RelinkPeripheralManagerCall.updateValues(Self.level, values: Array(repeating: [1], count: 17)).arguments() }
                == .invalidArguments)
        let overLegacy = PeripheralAdvertisement(localName: String(repeating: "n", count: 30))
        #expect(name { _ = try RelinkPeripheralManagerCall.startAdvertising(overLegacy).arguments() } == .invalidArguments)
        let gap = PublishedService(uuid: BluetoothUUID(shortValue: 0x1800))
        #expect(name { _ = try RelinkPeripheralManagerCall.addService(gap).arguments() } == .invalidArguments)
        let noProperties = PublishedService(uuid: Self.service, characteristics: [
            PublishedCharacteristic(uuid: Self.level.characteristic, properties: [], permissions: .readable),
        ])
        #expect(name { _ = try RelinkPeripheralManagerCall.addService(noProperties).arguments() } == .invalidArguments)
        let including = PublishedService(uuid: Self.service, includedServices: [BluetoothUUID(shortValue: 0x180A)])
        #expect(name { _ = try RelinkPeripheralManagerCall.addService(including).arguments() } == nil,
                "whether the included service is published is relinkd's to say")
    }

    /// The documented examples of docs/api/events.md, decoded.
    @Test func thePeripheralRolesEventsDecode() throws {
        let key = CharacteristicKey(service: try BluetoothUUID(parsing: "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"),
                                    characteristic: try BluetoothUUID(parsing: "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"))
        let characteristic = #""characteristic": {"characteristic": "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b", "service": "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"}"#
        let cases: [(String, String, PeripheralManagerEvent, EventKind)] = [
            ("read-request", #"{"readRequest": {"central": "00:00:00:00:00:03", \#(characteristic), "offset": 0, "request": 7}}"#,
             .readRequest(request: 7, central: "00:00:00:00:00:03", characteristic: key, offset: 0), .readRequest),
            ("write-request", #"{"writeRequest": {"central": "00:00:00:00:00:03", \#(characteristic), "offset": 0, "request": 0, "value": [1, 2], "withResponse": true, "kind": "reliable", "mtu": 247}}"#,
             .writeRequest(request: 0, central: "00:00:00:00:00:03", characteristic: key, offset: 0, value: [1, 2], kind: .reliable, mtu: 247), .writeRequest),
            ("subscribed", #"{"subscribed": {"central": "unknown", \#(characteristic)}}"#, .subscribed(central: "unknown", characteristic: key), .subscribed),
            ("unsubscribed", #"{"unsubscribed": {"central": "unknown", \#(characteristic)}}"#, .unsubscribed(central: "unknown", characteristic: key), .unsubscribed),
            ("ready-to-update", #"{"readyToUpdate": {}}"#, .readyToUpdate, .readyToUpdate),
        ]
        for (kind, json, expected, constant) in cases {
            let event = RelinkClientEvent(sequence: 3, kind: kind, payloadJSON: json)
            #expect(event.kind == constant, "\(kind)")
            #expect(event.peripheralManagerEvent == expected, "\(kind)")
            #expect(event.peripheral == nil)
        }
        #expect(RelinkClientEvent(sequence: 3, kind: "adapter-state",
                                   payloadJSON: try DecodingTests.json(.adapterState(adapter: "hci0", status: AdapterStatus(.poweredOn, roles: []))))
            .peripheralManagerEvent == nil, "a central-role kind is not a peripheral-role event")
    }

    @Test func theRestoredPeripheralRoleComesWithRegister() throws {
        var record = PeripheralManagerRecord(services: [PublishedService(uuid: Self.service, characteristics: [
            PublishedCharacteristic(uuid: Self.level.characteristic, properties: [.read, .notify], permissions: .readable, cacheable: true),
        ])], advertisement: PeripheralAdvertisement(localName: "S", data: AdvertisingData(serviceData: [Self.service: [90]])))
        record.cachedValues[Self.level] = [42]
        record.subscribers[Self.level] = ["00:00:00:00:00:03"]
        let state = try RelinkRestoredState(DecodingTests.restored(replacing: ("peripheral_manager", .string(record.json))))
        #expect(state.peripheralManager == record)
        #expect(try RelinkRestoredState(DecodingTests.restored()).peripheralManager == nil, "a relinkd without the peripheral role")
        #expect(throws: RelinkClientError.self) { try RelinkRestoredState(DecodingTests.restored(replacing: ("peripheral_manager", .string("{")))) }
    }
}
