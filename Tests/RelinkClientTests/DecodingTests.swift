import DBus
import Foundation
import RelinkClient
import RelinkAPI
import Testing
import RelinkModel

@Suite struct DecodingTests {
    static func dict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: .string, value: .variant, entries.map { .init(.string($0.0), .variant($0.1)) })
    }

    static func restored(dropping key: String? = nil, replacing: (String, DBusValue)? = nil) throws -> [String: DBusValue] {
        let peripheral = dict([
            ("object", .objectPath(try ObjectPath("/org/relink/peripheral/6b1f2c3d_0000_4abc_8def_0123456789ab"))),
            ("id", .string("6b1f2c3d-0000-4abc-8def-0123456789ab")), ("address", .string("00:00:00:00:00:02")),
            ("state", .string("connected")), ("services", .array(.string, [.string("8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b")])),
            ("subscriptions", .array(.structure([.string, .string]), [.structure([.string("s1"), .string("c1")])])),
            ("name", .string("Front Door")),
        ])
        var entries: [(String, DBusValue)] = [
            ("new", .boolean(false)), ("peripherals", .array(.dictionary(key: .string, value: .variant), [peripheral])),
            ("scan_services", .array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")])),
            ("scan_options", dict([("allow_duplicates", .boolean(true))])), ("scanning", .boolean(true)),
            ("last_sequence", .uint64(12)), ("acknowledged", .uint64(7)), ("dropped_events", .uint64(1)),
            ("dropped_range", .structure([.uint64(8), .uint64(8)])),
            ("adapter_state", .string("poweredOff")), ("adapter_roles", .array(.string, [.string("peripheral"), .string("central")])),
        ]
        entries.removeAll { $0.0 == key }
        if let replacing { entries.removeAll { $0.0 == replacing.0 }; entries.append(replacing) }
        return try [String: DBusValue](dbusValue: dict(entries))
    }

    @Test func restoredStateDecodesEveryDocumentedKey() throws {
        let state = try RelinkRestoredState(Self.restored())
        #expect(!state.isNew)
        #expect(state.peripherals.count == 1)
        let p = try #require(state.peripherals.first)
        #expect(p.object == "/org/relink/peripheral/6b1f2c3d_0000_4abc_8def_0123456789ab")
        #expect(p.id == "6b1f2c3d-0000-4abc-8def-0123456789ab")
        #expect(p.state == "connected")
        #expect(p.subscriptions == [.init(service: "s1", characteristic: "c1")])
        #expect(p.name == "Front Door")
        #expect(state.scanServices == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(state.allowDuplicates && state.scanning)
        #expect(state.lastSequence == 12 && state.acknowledged == 7 && state.droppedEvents == 1)
        #expect(state.droppedRange == 8...8)
        let none = try RelinkRestoredState(Self.restored(replacing: ("dropped_range", .structure([.uint64(0), .uint64(0)]))))
        #expect(none.droppedRange == nil)
    }

    @Test func theAdapterStateIsRestoredAndAnAdapterStateEventDecoded() throws {
        #expect(try RelinkRestoredState(Self.restored()).adapterStatus == AdapterStatus(.poweredOff, roles: [.central, .peripheral]))
        #expect(try RelinkRestoredState(Self.restored(dropping: "adapter_state")).adapterStatus == nil, "an older relinkd")
        #expect(try RelinkRestoredState(Self.restored(replacing: ("adapter_state", .string("resetting")))).adapterStatus == nil,
                "a state this library does not know")
        #expect(throws: RelinkClientError.self) { try RelinkRestoredState(Self.restored(replacing: ("adapter_state", .uint32(1)))) }
        let status = AdapterStatus(.blocked, roles: [.central])
        let event = RelinkClientEvent(sequence: 4, kind: "adapter-state", payloadJSON: try Self.json(.adapterState(adapter: "hci0", status: status)))
        #expect(event.kind == .adapterState && event.adapterStatus == status && event.peripheral == nil)
    }

    /// `connection_events`: nil when empty or absent (an older relinkd),
    /// the registration and its told links otherwise; a `connection-event`
    /// decodes into the client's accessor.
    @Test func connectionEventsAreRestoredAndTheirEventDecoded() throws {
        #expect(try RelinkRestoredState(Self.restored()).connectionEvents == nil)
        #expect(try RelinkRestoredState(Self.restored(replacing: ("connection_events", Self.dict([])))).connectionEvents == nil)
        let id = "6B1F2C3D-0000-4ABC-8DEF-0123456789AB"
        let registered = Self.dict([("services", .array(.string, [.string("0000fff0-0000-1000-8000-00805f9b34fb")])),
                                    ("peripherals", .array(.string, [])), ("connected", .array(.string, [.string(id)]))])
        let state = try RelinkRestoredState(Self.restored(replacing: ("connection_events", registered)))
        #expect(state.connectionEvents == .init(services: ["0000fff0-0000-1000-8000-00805f9b34fb"], peripherals: [], connected: [id]))
        let peripheral = try PeripheralID(parsing: id)
        let down = RelinkEvent.connectionEvent(peripheral: peripheral, address: nil, connected: false, reason: .bluetoothdRestarted)
        let event = RelinkClientEvent(sequence: 9, kind: "connection-event", payloadJSON: try Self.json(down))
        #expect(event.kind == .connectionEvent && event.peripheral == peripheral)
        #expect(event.connectionEvent?.connected == false && event.connectionEvent?.address == nil
                && event.connectionEvent?.reason == .bluetoothdRestarted)
    }

    @Test func restoredStateWithMissingOrMistypedKeysIsAnError() throws {
        for bad in [try Self.restored(dropping: "last_sequence"), try Self.restored(dropping: "new"),
                    try Self.restored(replacing: ("acknowledged", .string("7"))),
                    try Self.restored(replacing: ("peripherals", .array(.string, [.string("x")])))] {
            #expect(throws: RelinkClientError.self) { try RelinkRestoredState(bad) }
        }
    }

    static func json(_ event: RelinkEvent) throws -> String {
        String(decoding: try event.encoded(), as: UTF8.self)   // as relinkd writes the outbox
    }

    @Test func eventPayloadsDecodeIntoTheContractsPayloads() throws {
        let peripheral = PeripheralID()
        let key = CharacteristicKey(service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A37))
        let event = RelinkEvent.valueNotified(peripheral: peripheral, characteristic: key, value: [1, 2, 255])
        let decoded = RelinkClientEvent(sequence: 5, kind: "value-notified", payloadJSON: try Self.json(event))
        #expect(decoded.sequence == 5)
        #expect(decoded.kind == .valueNotified)
        #expect(decoded.payload == event)
        #expect(decoded.peripheral == peripheral)
        #expect(decoded.value == [1, 2, 255])

        let connected = RelinkEvent.connected(peripheral: peripheral, address: try BluetoothAddress(parsing: "00:00:00:00:00:02"), route: .knownIdentifier)
        #expect(RelinkClientEvent(sequence: 1, kind: "connected", payloadJSON: try Self.json(connected)).payload == connected)
    }

    /// When relinkd stored the event (`atMs`), for a value replayed long
    /// after it came; none in an event an earlier relinkd stored.
    @Test func anEventSaysWhenRelinkdStoredIt() throws {
        let event = RelinkEvent.valueNotified(peripheral: PeripheralID(), characteristic: CharacteristicKey(
            service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A37)), value: [7])
        let stored = String(decoding: try event.encoded(at: Date(timeIntervalSince1970: 1_795_968_000.25)), as: UTF8.self)
        #expect(stored.contains(#""atMs":1795968000250"#), "\(stored)")
        let decoded = RelinkClientEvent(sequence: 1, kind: "value-notified", payloadJSON: stored)
        #expect(decoded.payload == event && decoded.time == Date(timeIntervalSince1970: 1_795_968_000.25))
        let older = RelinkClientEvent(sequence: 1, kind: "value-notified", payloadJSON: try Self.json(event))
        #expect(older.payload == event && older.time == nil)
    }

    @Test func undecodablePayloadsKeepTheirTextAndKind() throws {
        let unknown = RelinkClientEvent(sequence: 9, kind: "future-kind", payloadJSON: "{\"x\":1}")
        #expect(unknown.kind.rawValue == "future-kind" && unknown.payload == nil && unknown.payloadJSON == "{\"x\":1}")
        #expect(RelinkClientEvent(sequence: 1, kind: "connected", payloadJSON: "not json").payload == nil)
        // A payload of another kind than announced is not trusted.
        let disconnected = RelinkEvent.disconnected(peripheral: PeripheralID(), reason: nil)
        #expect(RelinkClientEvent(sequence: 1, kind: "connected", payloadJSON: try Self.json(disconnected)).payload == nil)
    }

    @Test func peripheralPropertiesDecodeWithDefaults() throws {
        let props = try [String: DBusValue](dbusValue: Self.dict([
            ("Id", .string("6b1f2c3d-0000-4abc-8def-0123456789ab")), ("Address", .string("00:00:00:00:00:02")),
            ("Connected", .boolean(true)), ("RSSI", .int16(-60)), ("Name", .string("Front Door")), ("NameSource", .string("gap")),
        ]))
        let p = try RelinkPeripheral(object: "/org/relink/peripheral/x", properties: props)
        #expect(p.connected && p.rssi == -60 && p.name == "Front Door" && p.gapName == "" && p.services.isEmpty)
        #expect(throws: RelinkClientError.self) { try RelinkPeripheral(object: "/x", properties: ["Connected": .boolean(true)]) }
        #expect(throws: RelinkClientError.self) { try RelinkPeripheral(object: "/x", properties: ["Id": .uint32(1)]) }
    }
}
