import BlueZ
import DBus
import Foundation
import RelinkStore
import Restoration
import Systemd
import Testing
@testable import RelinkAPI
@testable import RelinkDaemon
import RelinkModel

/// Pure pieces of the daemon: failures from BlueZ errors and store round trips.
@Suite struct MappingTests {
    /// An adapter gone from bluetoothd is journalled with the catalog's
    /// "adapter removed" MESSAGE_ID, once (not again while it stays gone);
    /// no other change carries it.
    @Test func anAdapterRemovedCarriesItsMessageID() {
        let removed = Daemon.journalFields(.init(status: AdapterStatus(.missing), previous: AdapterStatus(.poweredOn)), adapter: "hci0")
        #expect(removed["MESSAGE_ID"] == .string(RelinkMessageID.adapterRemoved.id))
        #expect(removed["RELINK_EVENT"] == .string("adapter-removed"))
        #expect(removed["RELINK_ADAPTER"] == .string("hci0"))
        for (status, previous) in [(AdapterState.poweredOff, AdapterState.poweredOn), (.poweredOn, .missing), (.bluetoothdMissing, .poweredOn)] {
            let fields = Daemon.journalFields(.init(status: AdapterStatus(status), previous: AdapterStatus(previous)), adapter: "hci0")
            #expect(fields["MESSAGE_ID"] == nil, "\(previous) -> \(status)")
        }
        #expect(Daemon.journalFields(.init(status: AdapterStatus(.missing), previous: AdapterStatus(.missing)), adapter: "hci0")["MESSAGE_ID"] == nil)
    }

    @Test func aBlueZErrorKeepsItsNameAndMessage() {
        let failure = FailureMapping.failure(BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(failure.failureClass == .transient)
        #expect(failure.errorName == "org.bluez.Error.Failed" && failure.message == "le-connection-abort-by-local")
        #expect(FailureMapping.failure(BlueZError(name: "org.bluez.Error.NotPermitted", message: "x")).failureClass == .notPermitted)
        #expect(FailureMapping.failure(CancellationError()).failureClass == .unknown)
        let gone = FailureMapping.failure(DBusError(.serviceUnknown, "The name org.bluez was not provided by any .service files"))
        #expect(gone.failureClass == .transient && gone.errorName == "org.freedesktop.DBus.Error.ServiceUnknown", "bluetoothd gone is retried like a dropped link")
    }

    func record(_ phase: ConnectionIntentRecord.Phase, deadline: ConnectionDeadline = .pendingUntilCancelled) throws -> ConnectionIntentRecord {
        let options = try ConnectionOptions(strategies: [.scan, .knownIdentifier], deadline: deadline,
                                            services: [BluetoothUUID(shortValue: 0x180D)])
        return ConnectionIntentRecord(
            intent: ConnectionIntentID(identifier: try RestoreIdentifier("org.example.lock"), peripheral: PeripheralID()),
            options: options, address: try BluetoothAddress(parsing: "00:00:00:00:00:02"), phase: phase)
    }

    func peripheralRow(for record: ConnectionIntentRecord) throws -> PeripheralRecord {
        try PeripheralRecord(
            id: record.intent.peripheral,
            address: DeviceAddress(adapter: "hci0", address: "00:00:00:00:00:02", addressType: "public"),
            serviceUUIDs: [BluetoothUUID(parsing: "180d")], createdAt: Date())
    }

    @Test(arguments: [
        ConnectionIntentRecord.Phase.pending, .connected, .idle,
        .failed(ConnectionFailure(.notPermitted, errorName: "org.relink.Error.Failed", message: "org.bluez.Error.NotPermitted: no")),
    ])
    func intentRecordsSurviveTheStore(_ phase: ConnectionIntentRecord.Phase) throws {
        let original = try record(phase, deadline: .after(.seconds(30)))
        let row = try StoreMapping.storeIntent(original)
        let back = try StoreMapping.coreRecord(row, peripheral: try peripheralRow(for: original))
        #expect(back.intent == original.intent)
        #expect(back.address == original.address)
        #expect(back.options.strategies == [.scan, .knownIdentifier])
        #expect(back.options.services == original.options.services)
        #expect(back.options.deadline == .after(.seconds(30)))
        switch (phase, back.phase) {
        case (.failed(let a), .failed(let b)): #expect(a.failureClass == b.failureClass)
        default: #expect(back.phase == phase)
        }
    }

    @Test func eventsAreStoredAsJSONUnderTheirName() throws {
        let peripheral = PeripheralID()
        let key = CharacteristicKey(service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A37))
        let draft = try StoreMapping.draft(.valueNotified(peripheral: peripheral, characteristic: key, value: [1, 2]), for: try RestoreIdentifier("a"))
        #expect(draft.kind == "value-notified")
        let decoded = try RelinkEvent(kind: .valueNotified, json: draft.payload)
        #expect(decoded == .valueNotified(peripheral: peripheral, characteristic: key, value: [1, 2]))
    }
}

/// The hand-written JSON of `value-notified` (relinkd's hot path) is the
/// very bytes the general encoder writes for the event.
@Suite struct ValuePayloadTests {
    @Test func handWrittenValuePayloadEqualsJSONEncoder() throws {
        var rng = SplitMix64(seed: 42)
        let lengths = [0, 1, 2, 9, 10, 99, 100, 255, 256, 512, 600]
        for round in 0..<600 {
            let service = round % 3 == 0 ? BluetoothUUID(shortValue: UInt32.random(in: 0...UInt32.max, using: &rng))
                : BluetoothUUID(high: UInt64.random(in: 0...UInt64.max, using: &rng), low: UInt64.random(in: 0...UInt64.max, using: &rng))
            let characteristic = BluetoothUUID(high: UInt64.random(in: 0...UInt64.max, using: &rng), low: UInt64.random(in: 0...UInt64.max, using: &rng))
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let peripheral = PeripheralID(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                                      bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
            let length = round < lengths.count ? lengths[round] : Int.random(in: 0...40, using: &rng)
            // Every byte value appears (0, 9, 10, 99, 100, 255 are the digit edges).
            let value = (0..<length).map { i in round == 8 ? UInt8(i) : UInt8.random(in: 0...255, using: &rng) }
            let event = RelinkEvent.valueNotified(peripheral: peripheral, characteristic: CharacteristicKey(service: service, characteristic: characteristic), value: value)
            // With the time relinkd stores (every other round) and without.
            let at = round % 2 == 0 ? Date(timeIntervalSince1970: 1_795_968_000 + Double(round) * 0.001) : nil
            let fast = try at.map { try StoreMapping.payload(event, at: $0) } ?? event.encoded()
            let reference = try event.encodedByJSONEncoder(at: at)
            #expect(fast == reference, "\(String(decoding: fast, as: UTF8.self)) != \(String(decoding: reference, as: UTF8.self))")
            if fast != reference { return }
        }
    }

    /// The payloads relinkd writes for these events, byte for byte: the
    /// format is relink's contract with programs and with the events
    /// older relinkds stored, so a change to it must be made here on
    /// purpose (and, if it is not an addition, with a new format version).
    /// Pinned from the run that checked them equal to what relinkd wrote
    /// before the format was written out (format 1, and format 2's
    /// millisecond name times).
    static let pinned: [String] = [
        #"{"discovered":{"advertisement":{"address":{"address":"00:00:00:00:00:02","type":"public"},"localName":"RLK-7F3A","manufacturerData":[],"rssi":-61,"serviceUUIDs":["8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"]},"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"}}}"#,
        #"{"connected":{"address":{"address":"00:00:00:00:00:02","type":"public"},"maximumWriteWithResponse":512,"maximumWriteWithoutResponse":244,"mtu":247,"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"route":"knownIdentifier"}}"#,
        #"{"restored":{"address":{"address":"00:00:00:00:00:02","type":"public"},"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"route":"knownIdentifier"}}"#,
        #"{"failedToConnect":{"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"reason":{"errorName":"org.relink.Error.Timeout","failureClass":"timeout","message":"overall deadline passed"}}}"#,
        #"{"disconnected":{"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"}}}"#,
        #"{"valueNotified":{"characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"value":[1,255]}}"#,
        #"{"nameUpdated":{"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"update":{"change":{"current":"Front Door","source":"gap"},"names":{"advertising":{"seenAtMs":1790000000000,"value":"RLK-7F3A"},"gap":{"seenAtMs":1790000005000,"value":"Front Door"}},"resolved":{"name":"Front Door","reason":"gapNameKnown","source":"gap"}}}}"#,
        #"{"subscriptionFailed":{"characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"reason":{"errorName":"org.relink.Error.UnknownCharacteristic","failureClass":"notSupported","message":"services are resolved and service 8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b has no characteristic 8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"}}}"#,
        #"{"adapterState":{"adapter":"hci0","roles":["central","peripheral","central-peripheral"],"state":"poweredOff"}}"#,
        #"{"servicesChanged":{"database":{"readAtMs":1767225600123,"services":[{"characteristics":[{"descriptors":[],"flags":["notify"],"properties":["notify"],"uuid":"00002a37-0000-1000-8000-00805f9b34fb"}],"includes":[],"primary":true,"uuid":"0000180d-0000-1000-8000-00805f9b34fb"}]},"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"}}}"#,
        #"{"bondRemoved":{"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"}}}"#,
        #"{"pairingRequest":{"kind":"confirmation","passkey":123456,"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"request":3}}"#,
        #"{"readRequest":{"central":"00:00:00:00:00:03","characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"mtu":512,"offset":0,"request":7}}"#,
        #"{"writeRequest":{"central":"00:00:00:00:00:03","characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"kind":"request","mtu":512,"offset":0,"request":0,"value":[1,2],"withResponse":true}}"#,
        #"{"subscribed":{"central":"unknown","characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"}}}"#,
        #"{"unsubscribed":{"central":"unknown","characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"}}}"#,
        #"{"readyToUpdate":{}}"#,
        #"{"transferProgress":{"characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"length":262144,"offset":48860,"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"transfer":"5f0c2b1e-8e54-4b8a-9d2b-0e6e1b1c7a10"}}"#,
        #"{"transferCompleted":{"characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"length":262144,"offset":262144,"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"transfer":"5f0c2b1e-8e54-4b8a-9d2b-0e6e1b1c7a10"}}"#,
        #"{"transferFailed":{"characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"length":262144,"offset":97720,"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"reason":{"errorName":"org.relink.Error.LinkLost","failureClass":"transient","message":"the link went down at byte 97720 of 262144"},"transfer":"5f0c2b1e-8e54-4b8a-9d2b-0e6e1b1c7a10"}}"#,
        #"{"notificationState":{"characteristic":{"characteristic":"8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b","service":"8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"},"notifying":false,"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"reason":{"errorName":"org.relink.Error.LinkLost","failureClass":"transient","message":"link lost: the peripheral went out of range"}}}"#,
        #"{"connectionEvent":{"address":{"address":"C0:11:22:33:44:55","type":"random"},"event":"peer-disconnected","peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"reason":{"errorName":"org.relink.Error.LinkLost","failureClass":"transient","message":"the link went down (bluetoothd: org.bluez.Reason.Timeout)"}}}"#,
        #"{"disconnected":{"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"},"reason":{"errorName":"org.relink.Error.AdapterOff","failureClass":"notReady","message":"adapter powered off"}}}"#,
        #"{"discovered":{"advertisement":{"address":{"address":"C0:00:00:00:00:01","type":"random"},"manufacturerData":[76,[1,2,3]],"serviceUUIDs":[]},"peripheral":{"uuid":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"}}}"#,
    ]

    @Test func theWireFormatIsPinned() throws {
        let events = try APIEventPayloadTests.samples() + [
            .disconnected(peripheral: APIEventPayloadTests.peripheral, reason: .adapterOff),
            .discovered(peripheral: APIEventPayloadTests.peripheral, advertisement: Advertisement(
                address: try BluetoothAddress(parsing: "C0:00:00:00:00:01", kind: .random), data: AdvertisingData(manufacturerData: [0x004C: [1, 2, 3]]))),
        ]
        #expect(events.count == Self.pinned.count)
        let at = Date(timeIntervalSince1970: 1_795_968_000.123)
        for (event, pinned) in zip(events, Self.pinned) {
            let wire = String(decoding: try event.encoded(), as: UTF8.self)
            #expect(wire == pinned)
            #expect(try RelinkEvent(kind: event.kind, json: Data(pinned.utf8)) == event, "\(pinned)")
            // What relinkd stores: the same, with the time in the kind's
            // object (`atMs`, added within format 2), read back.
            let stored = String(decoding: try StoreMapping.payload(event, at: at), as: UTF8.self)
            var expected = try #require(try JSONSerialization.jsonObject(with: Data(pinned.utf8)) as? [String: [String: Any]])
            expected[event.kind.payloadKey]?["atMs"] = 1_795_968_000_123
            let object = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
            #expect(NSDictionary(dictionary: object).isEqual(to: expected), "\(stored)")
            // The one casing (docs/api/README.md#json), on the wire and stored.
            #expect(JSONKey.keysNotCamelCase(in: object).isEmpty, "\(stored)")
            let decoded = try RelinkEvent.decoded(kind: event.kind, json: Data(stored.utf8))
            #expect(decoded.event == event && decoded.at == Date(timeIntervalSince1970: 1_795_968_000.123))
        }
    }
}
