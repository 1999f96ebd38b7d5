import Foundation
@testable import RelinkAPI
import RelinkModel
import Testing

@Suite("Event wire format")
struct EventPayloadTests {
    static let peripheral = PeripheralID()
    static let address = (try? BluetoothAddress(parsing: "00:00:00:00:00:02")) ?? BluetoothAddress.placeholder
    static let key = CharacteristicKey(service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A37))

    static func transfer(offset: Int) -> TransferStatus {
        TransferStatus(transfer: TransferID(UUID(uuidString: "5F0C2B1E-8E54-4B8A-9D2B-0E6E1B1C7A10") ?? UUID()), peripheral: peripheral,
                       characteristic: key, offset: offset, length: 262_144)
    }

    static var samples: [RelinkEvent] {
        var names = PeripheralNames()
        let change = names.sawGAPName("Band", at: Date(timeIntervalSince1970: 1_800_000_000)) ?? NameChange(source: .gap, previous: nil, current: "Band")
        return [
            .discovered(peripheral: peripheral, advertisement: Advertisement(address: address, localName: "Band", serviceUUIDs: [key.service],
                                                                             data: AdvertisingData(
                manufacturerData: [0x004C: [1, 2], 0xFFFF: []], serviceData: [BluetoothUUID(shortValue: 0xFEAA): [0x10, 0]],
                txPower: -4, appearance: 0x0340, flags: [0x06], raw: [0xFF: [0x4C, 0, 1, 2], 0x16: [0xAA, 0xFE, 0x10, 0]]), rssi: -40)),
            .discovered(peripheral: peripheral, advertisement: Advertisement(address: address)),
            .connected(peripheral: peripheral, address: address, route: .scan),
            .restored(peripheral: peripheral, address: address, route: .knownIdentifier),
            .failedToConnect(peripheral: peripheral, reason: ConnectionFailure(.notPermitted, errorName: "org.bluez.Error.NotPermitted", message: "no")),
            .disconnected(peripheral: peripheral, reason: nil),
            .disconnected(peripheral: peripheral, reason: .adapterOff),
            .valueNotified(peripheral: peripheral, characteristic: key, value: [0x06, 0x48, 0, 255, 100, 10, 9]),
            .nameUpdated(peripheral: peripheral, update: NameUpdate(
                change: change, resolved: .init(name: "Band", source: .gap, reason: .gapNameKnown), names: names)),
            .subscriptionFailed(peripheral: peripheral, characteristic: key, reason: ConnectionFailure(
                .notSupported, errorName: "org.relink.Error.UnknownCharacteristic", message: "not there")),
            .notificationState(peripheral: peripheral, characteristic: key, notifying: true, reason: nil),
            .notificationState(peripheral: peripheral, characteristic: key, notifying: false, reason: nil),
            .notificationState(peripheral: peripheral, characteristic: key, notifying: false, reason: ConnectionFailure(
                .transient, errorName: "org.relink.Error.LinkLost", message: "link lost")),
            .connectionEvent(peripheral: peripheral, address: address, connected: true, reason: nil),
            .connectionEvent(peripheral: peripheral, address: nil, connected: false, reason: ConnectionFailure(
                .transient, errorName: "org.relink.Error.LinkLost", message: "the link went down while relinkd was not running")),
            .adapterState(adapter: "hci0", status: AdapterStatus(.blocked, roles: [.centralPeripheral, .central])),
            .adapterState(adapter: "hci1", status: AdapterStatus(.bluetoothdMissing)),
            .peripheralManager(.readRequest(request: 3, central: "AA:BB:CC:DD:EE:01", characteristic: CharacteristicKey(
                service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19)), offset: 2, mtu: 247)),
            .peripheralManager(.writeRequest(request: 0, central: "unknown", characteristic: CharacteristicKey(
                service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19)), offset: 0, value: [0, 255], kind: .command)),
            .peripheralManager(.writeRequest(request: 4, central: "AA:BB:CC:DD:EE:01", characteristic: CharacteristicKey(
                service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19)), offset: 18, value: [1], kind: .reliable, mtu: 23)),
            .peripheralManager(.subscribed(central: "unknown", characteristic: CharacteristicKey(
                service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19)))),
            .peripheralManager(.unsubscribed(central: "AA:BB:CC:DD:EE:01", characteristic: CharacteristicKey(
                service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19)))),
            .peripheralManager(.readyToUpdate),
            .bondRemoved(peripheral: PeripheralID(UUID())),
            .pairingRequest(peripheral: PeripheralID(UUID()), request: 3, kind: "confirmation", passkey: 123_456),
            .pairingRequest(peripheral: PeripheralID(UUID()), request: 4, kind: "passkey", passkey: nil),
            .servicesChanged(peripheral: PeripheralID(UUID()), database: GattDatabase(services: [
                GattDatabase.Service(uuid: BluetoothUUID(shortValue: 0x180D), characteristics: [
                    GattDatabase.Characteristic(uuid: BluetoothUUID(shortValue: 0x2A37), flags: ["notify"],
                                                descriptors: [GattDatabase.Descriptor(uuid: GattDatabase.userDescription, flags: ["read"])]),
                ]),
            ], readAt: Date(timeIntervalSince1970: 1_767_225_600))),
            .transfer(.progress(transfer(offset: 4880))),
            .transfer(.completed(transfer(offset: 262_144))),
            .transfer(.failed(transfer(offset: 244), reason: ConnectionFailure(
                .transient, errorName: "org.relink.Error.LinkLost", message: "the link went down at byte 244 of 262144"))),
        ]
    }

    @Test func everyKindRoundTrips() throws {
        for payload in Self.samples {
            let json = try payload.encoded()
            #expect(try RelinkEvent(kind: payload.kind, json: json) == payload, "\(String(decoding: json, as: UTF8.self))")
        }
        #expect(Set(Self.samples.map(\.kind)) == Set(EventKind.allCases))
    }

    @Test func theDirectValueWriterWritesWhatTheEncoderWrites() throws {
        for value: [UInt8] in [[], [0], [9, 10, 99, 100, 199, 200, 255], Array(0...255)] {
            let payload = RelinkEvent.valueNotified(peripheral: PeripheralID(), characteristic: Self.key, value: value)
            #expect(try payload.encoded() == payload.encodedByJSONEncoder())
        }
    }

    @Test func aPayloadOfAnotherKindIsRefused() throws {
        let json = try RelinkEvent.connected(peripheral: Self.peripheral, address: Self.address, route: .scan).encoded()
        #expect(throws: DecodingError.self) { try RelinkEvent(kind: .restored, json: json) }
        #expect(throws: DecodingError.self) { try RelinkEvent(kind: .connected, json: Data(#"{"connected":{},"restored":{}}"#.utf8)) }
    }

    @Test func optionalFieldsAreLeftOutNeverNull() throws {
        let text = String(decoding: try RelinkEvent.disconnected(peripheral: Self.peripheral, reason: nil).encoded(), as: UTF8.self)
        #expect(!text.contains("null") && !text.contains("reason"))
        let ad = String(decoding: try Self.samples[1].encoded(), as: UTF8.self)
        #expect(!ad.contains("localName") && !ad.contains("rssi") && ad.contains(#""manufacturerData":[]"#))
    }

    @Test func formatVersionTwo() { #expect(RelinkEvent.formatVersion == 2) }

    @Test func anAdapterStateIsAboutNoPeripheralAndRefusesUnknownNames() throws {
        let payload = RelinkEvent.adapterState(adapter: "hci0", status: AdapterStatus(.poweredOff, roles: [.peripheral, .central]))
        #expect(payload.peripheral == nil)
        #expect(String(decoding: try payload.encoded(), as: UTF8.self)
            == #"{"adapterState":{"adapter":"hci0","roles":["central","peripheral"],"state":"poweredOff"}}"#)
        #expect(throws: DecodingError.self) {
            try RelinkEvent(kind: .adapterState, json: Data(#"{"adapterState":{"adapter":"hci0","roles":[],"state":"resetting"}}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try RelinkEvent(kind: .adapterState, json: Data(#"{"adapterState":{"adapter":"hci0","roles":["observer"],"state":"poweredOn"}}"#.utf8))
        }
    }

    /// Format 2 writes name times as Unix milliseconds (`seenAtMs`), as every
    /// other time of the API; a format-1 payload (stored by an older
    /// relinkd: `seenAt`, seconds since 2001) still decodes to the same names.
    @Test func nameTimesAreUnixMillisecondsAndFormatOneStillReads() throws {
        guard let sample = Self.samples.first(where: { $0.kind == .nameUpdated }), case .nameUpdated(_, let update) = sample else { throw Missing() }
        let text = String(decoding: try sample.encoded(), as: UTF8.self)
        #expect(text.contains(#""seenAtMs":1800000000000"#) && !text.contains(#""seenAt":"#), "\(text)")
        let formatOne = text.replacingOccurrences(of: #""seenAtMs":1800000000000"#,
                                                  with: #""seenAt":\#(Date(timeIntervalSince1970: 1_800_000_000).timeIntervalSinceReferenceDate)"#)
        let decoded = try RelinkEvent(kind: .nameUpdated, json: Data(formatOne.utf8))
        guard case .nameUpdated(_, let old) = decoded else { throw Missing() }
        #expect(old.names.gap?.seenAt == update.names.gap?.seenAt)
    }

    /// A `write-request` says its kind beside `withResponse` and the MTU
    /// when bluetoothd passed one; one stored before `kind` existed (no
    /// `kind`, no `mtu`) still reads, its kind taken from `withResponse`.
    @Test func aWriteRequestSaysItsKindAndOneStoredWithoutItStillReads() throws {
        let key = #""characteristic":{"characteristic":"00002a19-0000-1000-8000-00805f9b34fb","service":"0000180f-0000-1000-8000-00805f9b34fb"}"#
        for (withResponse, kind) in [(false, WriteKind.command), (true, .request)] {
            let old = #"{"writeRequest":{"central":"unknown",\#(key),"offset":0,"request":0,"value":[1],"withResponse":\#(withResponse)}}"#
            let decoded = try RelinkEvent(kind: .writeRequest, json: Data(old.utf8))
            guard case .peripheralManager(.writeRequest(_, _, _, _, _, let read, let mtu)) = decoded else { throw Missing() }
            #expect(read == kind && mtu == nil)
        }
        let reliable = RelinkEvent.peripheralManager(.writeRequest(request: 2, central: "unknown", characteristic: CharacteristicKey(
            service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19)), offset: 0, value: [1], kind: .reliable, mtu: 185))
        let text = String(decoding: try reliable.encoded(), as: UTF8.self)
        #expect(text.contains(#""kind":"reliable""#) && text.contains(#""withResponse":true"#) && text.contains(#""mtu":185"#), "\(text)")
    }

    struct Missing: Error {}
}

extension BluetoothAddress {
    /// An address for tests whose literal cannot fail.
    static var placeholder: BluetoothAddress {
        do { return try BluetoothAddress(octets: [0, 0, 0, 0, 0, 2]) } catch { fatalError("six octets") }
    }
}
