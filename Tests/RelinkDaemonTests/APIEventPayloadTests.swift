import Foundation
import Restoration
import Testing
@testable import RelinkDaemon
import RelinkModel

/// The event payloads documented in docs/api/events.md: the JSON the outbox
/// stores (and `Central1.Event` carries) has the documented shape.
@Suite struct APIEventPayloadTests {
    static let peripheral = PeripheralID(UUID(uuidString: "1B4E28BA-2FA1-11D2-883F-0016D3CCA427") ?? UUID())
    static let address = try? BluetoothAddress(parsing: "00:00:00:00:00:02")
    static let service = (try? BluetoothUUID(parsing: "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"))
    static let characteristic = (try? BluetoothUUID(parsing: "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"))

    static func samples() throws -> [RelinkEvent] {
        let service = try #require(Self.service), characteristic = try #require(Self.characteristic)
        let address = try #require(Self.address)
        let failure = ConnectionFailure(.timeout, errorName: "org.relink.Error.Timeout", message: "overall deadline passed")
        var names = PeripheralNames()
        _ = names.sawAdvertisingName("RLK-7F3A", at: Date(timeIntervalSince1970: 1_790_000_000))
        let gapChange = names.sawGAPName("Front Door", at: Date(timeIntervalSince1970: 1_790_000_005))
        let change = try #require(gapChange)
        return [
            .discovered(peripheral: peripheral, advertisement: Advertisement(address: address, localName: "RLK-7F3A", serviceUUIDs: [service], rssi: -61)),
            .connected(peripheral: peripheral, address: address, route: .knownIdentifier, limits: WriteLimits(mtu: 247)),
            .restored(peripheral: peripheral, address: address, route: .knownIdentifier),
            .failedToConnect(peripheral: peripheral, reason: failure),
            .disconnected(peripheral: peripheral, reason: nil),
            .valueNotified(peripheral: peripheral, characteristic: CharacteristicKey(service: service, characteristic: characteristic), value: [1, 255]),
            .nameUpdated(peripheral: peripheral, update: names.update(for: change, preferring: .gapName)),
            .subscriptionFailed(peripheral: peripheral, characteristic: CharacteristicKey(service: service, characteristic: characteristic),
                                reason: GattGrace.unknownCharacteristic(CharacteristicKey(service: service, characteristic: characteristic), .notInDatabase)),
            .adapterState(adapter: "hci0", status: AdapterStatus(.poweredOff, roles: [.central, .peripheral, .centralPeripheral])),
            .servicesChanged(peripheral: peripheral, database: GattDatabase(
                services: [.init(uuid: try BluetoothUUID(parsing: "180d"), characteristics: [.init(uuid: try BluetoothUUID(parsing: "2a37"), flags: ["notify"])])],
                readAt: Date(timeIntervalSince1970: 1_767_225_600.123))),
            .bondRemoved(peripheral: peripheral),
            .pairingRequest(peripheral: peripheral, request: 3, kind: "confirmation", passkey: 123_456),
            .peripheralManager(.readRequest(request: 7, central: "00:00:00:00:00:03", characteristic: CharacteristicKey(service: service, characteristic: characteristic), offset: 0,
                                            mtu: 512)),
            .peripheralManager(.writeRequest(request: 0, central: "00:00:00:00:00:03", characteristic: CharacteristicKey(service: service, characteristic: characteristic),
                                             offset: 0, value: [1, 2], kind: .request, mtu: 512)),
            .peripheralManager(.subscribed(central: "unknown", characteristic: CharacteristicKey(service: service, characteristic: characteristic))),
            .peripheralManager(.unsubscribed(central: "unknown", characteristic: CharacteristicKey(service: service, characteristic: characteristic))),
            .peripheralManager(.readyToUpdate),
        ] + transferSamples(CharacteristicKey(service: service, characteristic: characteristic)) + [
            .notificationState(peripheral: peripheral, characteristic: CharacteristicKey(service: service, characteristic: characteristic), notifying: false,
                               reason: ConnectionFailure(.transient, errorName: "org.relink.Error.LinkLost", message: "link lost: the peripheral went out of range")),
            .connectionEvent(peripheral: peripheral, address: try BluetoothAddress(parsing: "C0:11:22:33:44:55", kind: .random), connected: false,
                             reason: ConnectionFailure(.transient, errorName: "org.relink.Error.LinkLost", message: "the link went down (bluetoothd: org.bluez.Reason.Timeout)")),
        ]
    }

    static func transferSamples(_ key: CharacteristicKey) -> [RelinkEvent] {
        let status = { (offset: Int) in
            TransferStatus(transfer: TransferID(UUID(uuidString: "5F0C2B1E-8E54-4B8A-9D2B-0E6E1B1C7A10") ?? UUID()), peripheral: peripheral,
                           characteristic: key, offset: offset, length: 262_144)
        }
        return [
            .transfer(.progress(status(48_860))),
            .transfer(.completed(status(262_144))),
            .transfer(.failed(status(97_720), reason: ConnectionFailure(.transient, errorName: "org.relink.Error.LinkLost",
                                                                         message: "the link went down at byte 97720 of 262144"))),
        ]
    }

    /// The time the documented examples were stored at (`atMs`).
    static let storedAt = Date(timeIntervalSince1970: 1_795_968_000)

    static func json(_ event: RelinkEvent) throws -> (String, [String: Any]) {
        let draft = try StoreMapping.draft(event, for: try RestoreIdentifier("org.example.lock"), at: storedAt)
        #expect(draft.createdAt == storedAt, "the outbox row and the payload say the same time")
        let text = String(decoding: draft.payload, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: draft.payload) as? [String: Any])
        return (text, object)
    }

    @Test func everyKindIsOneObjectKeyedByTheCamelCaseKind() throws {
        let expectedKeys = ["discovered", "connected", "restored", "failedToConnect", "disconnected", "valueNotified", "nameUpdated",
                            "subscriptionFailed", "adapterState", "servicesChanged", "bondRemoved", "pairingRequest", "readRequest", "writeRequest", "subscribed", "unsubscribed", "readyToUpdate",
                            "transferProgress", "transferCompleted", "transferFailed", "notificationState", "connectionEvent"]
        #expect(try Self.samples().count == expectedKeys.count)
        for (event, key) in zip(try Self.samples(), expectedKeys) {
            let (text, object) = try Self.json(event)
            if ProcessInfo.processInfo.environment["RELINK_PRINT_PAYLOADS"] == "1" { print("PAYLOAD \(event.name) \(text)") }
            #expect(Array(object.keys) == [key], "\(event.name): \(text)")
            let inner = try #require(object[key] as? [String: Any])
            if event.peripheral == nil {
                #expect(inner["peripheral"] == nil, "\(event.name) is about no peripheral: \(text)")
            } else {
                #expect((inner["peripheral"] as? [String: Any])?["uuid"] as? String == "1B4E28BA-2FA1-11D2-883F-0016D3CCA427")
            }
        }
    }

    /// The first JSON example under each kind's heading in
    /// docs/api/events.md, by kind.
    static func documentedExamples() throws -> [String: Any] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/api/events.md"), encoding: .utf8)
        var examples: [String: Any] = [:]
        for section in text.components(separatedBy: "\n### `").dropFirst() {
            guard let name = section.split(separator: "`").first, let start = section.range(of: "```json\n"),
                  let end = section.range(of: "\n```", range: start.upperBound..<section.endIndex) else { continue }
            examples[String(name)] = try JSONSerialization.jsonObject(with: Data(section[start.upperBound..<end.lowerBound].utf8))
        }
        return examples
    }

    @Test func eachKindsExampleInTheDocsIsWhatTheEncoderWrites() throws {
        let examples = try Self.documentedExamples()
        for event in try Self.samples() {
            let (text, object) = try Self.json(event)
            let documented = try #require(examples[event.name] as? [String: Any], "docs/api/events.md has no example of \(event.name)")
            #expect(NSDictionary(dictionary: documented).isEqual(to: object), "\(event.name): the encoder writes \(text)")
        }
        #expect(Set(examples.keys) == Set(try Self.samples().map(\.name)), "an example for every kind, and no other")
    }

    @Test func fieldsAreAsDocumented() throws {
        let samples = try Self.samples()
        let discovered = try #require(try Self.json(samples[0]).1["discovered"] as? [String: Any])
        let advertisement = try #require(discovered["advertisement"] as? [String: Any])
        #expect((advertisement["address"] as? [String: Any])?["address"] as? String == "00:00:00:00:00:02")
        #expect((advertisement["address"] as? [String: Any])?["type"] as? String == "public")
        #expect(advertisement["localName"] as? String == "RLK-7F3A")
        #expect(advertisement["rssi"] as? Int == -61)
        let connected = try #require(try Self.json(samples[1]).1["connected"] as? [String: Any])
        #expect(connected["route"] as? String == "knownIdentifier")
        #expect(connected["mtu"] as? Int == 247 && connected["maximumWriteWithResponse"] as? Int == 512
                && connected["maximumWriteWithoutResponse"] as? Int == 244, "the write limits, when known")
        let restored = try #require(try Self.json(samples[2]).1["restored"] as? [String: Any])
        #expect(restored["mtu"] == nil && restored["maximumWriteWithoutResponse"] == nil, "unknown limits are left out")
        let failed = try #require(try Self.json(samples[3]).1["failedToConnect"] as? [String: Any])
        #expect((failed["reason"] as? [String: Any])?["failureClass"] as? String == "timeout")
        let disconnected = try #require(try Self.json(samples[4]).1["disconnected"] as? [String: Any])
        #expect(disconnected["reason"] == nil, "a requested disconnection has no reason key")
        let notified = try #require(try Self.json(samples[5]).1["valueNotified"] as? [String: Any])
        #expect(notified["value"] as? [Int] == [1, 255])
        #expect((notified["characteristic"] as? [String: Any])?["service"] as? String == "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b")
        let named = try #require(try Self.json(samples[6]).1["nameUpdated"] as? [String: Any])
        let update = try #require(named["update"] as? [String: Any])
        #expect((update["resolved"] as? [String: Any])?["name"] as? String == "Front Door")
        #expect((update["change"] as? [String: Any])?["source"] as? String == "gap")
        let subscriptionFailed = try #require(try Self.json(samples[7]).1["subscriptionFailed"] as? [String: Any])
        #expect((subscriptionFailed["characteristic"] as? [String: Any])?["characteristic"] as? String == "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b")
        #expect((subscriptionFailed["reason"] as? [String: Any])?["errorName"] as? String == "org.relink.Error.UnknownCharacteristic")
        #expect((subscriptionFailed["reason"] as? [String: Any])?["failureClass"] as? String == "notSupported")
        let adapter = try #require(try Self.json(samples[8]).1["adapterState"] as? [String: Any])
        #expect(adapter["adapter"] as? String == "hci0" && adapter["state"] as? String == "poweredOff")
        #expect(adapter["roles"] as? [String] == ["central", "peripheral", "central-peripheral"])
    }
}
