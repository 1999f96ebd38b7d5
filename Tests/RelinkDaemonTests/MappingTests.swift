import BlueZ
import Foundation
import RelinkStore
import Restoration
import Testing
@testable import RelinkDaemon
import RelinkModel

/// Pure pieces of the daemon: error class mapping and store round trips.
@Suite struct MappingTests {
    @Test(arguments: BlueZErrorClass.allCases)
    func everyBlueZClassMapsToTheCoreClass(_ c: BlueZErrorClass) {
        let expected: FailureClass = switch c {
        case .transient, .serviceUnavailable: .transient
        case .inProgress: .inProgress
        case .notReady: .notReady
        case .deviceGone: .deviceGone
        case .notSupported: .notSupported
        case .notPermitted: .notPermitted
        case .timeout: .timeout
        case .unknown: .unknown
        }
        #expect(FailureMapping.failureClass(c) == expected)
    }

    @Test func aBlueZErrorKeepsItsNameAndMessage() {
        let failure = FailureMapping.failure(BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(failure.failureClass == .transient)
        #expect(failure.errorName == "org.bluez.Error.Failed" && failure.message == "le-connection-abort-by-local")
        #expect(FailureMapping.failure(BlueZError(name: "org.bluez.Error.NotPermitted", message: "x")).failureClass == .notPermitted)
        #expect(FailureMapping.failure(CancellationError()).failureClass == .unknown)
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
        let decoded = try JSONDecoder().decode(RelinkEvent.self, from: draft.payload)
        #expect(decoded == .valueNotified(peripheral: peripheral, characteristic: key, value: [1, 2]))
    }
}

/// The hand-written JSON of `value-notified` (relinkd's hot path) is the
/// very bytes `JSONEncoder` writes for the event.
@Suite struct ValuePayloadTests {
    @Test func handWrittenValuePayloadEqualsJSONEncoder() throws {
        var rng = SplitMix(seed: 42)
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
            let fast = try StoreMapping.payload(event)
            let reference = try Self.synthesized(event)
            #expect(fast == reference, "\(String(decoding: fast, as: UTF8.self)) != \(String(decoding: reference, as: UTF8.self))")
            if fast != reference { return }
        }
    }

    /// What relinkd wrote before the wire format was written out: the
    /// synthesized `Codable` of the core's event, sorted keys.
    static func synthesized(_ event: RelinkEvent) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(event)
    }

    /// The core's advertisement now nests its data (`data`, issue 22); the
    /// wire kept the old shape: `manufacturerData` beside the other fields
    /// (an advertisement with no other data, as relinkd had then).
    static func oldAdvertisementShape(_ synthesized: String) -> String {
        guard let start = synthesized.range(of: #""data":{"manufacturerData":"#),
              let end = synthesized.range(of: #","raw":[],"serviceData":[]},"#, range: start.upperBound..<synthesized.endIndex) else { return synthesized }
        let manufacturer = String(synthesized[start.upperBound..<end.lowerBound])
        var text = synthesized.replacingCharacters(in: start.lowerBound..<end.upperBound, with: "")
        if let next = text.range(of: #""rssi":"#) ?? text.range(of: #""serviceUUIDs":"#) {
            text.insert(contentsOf: #""manufacturerData":"# + manufacturer + ",", at: next.lowerBound)
        }
        return text
    }

    /// The wire format is byte for byte what clients got before it was
    /// written out (single-element sets: a set's order is not part of
    /// either), except for format 2's one change: `name-updated` times as
    /// Unix milliseconds (`seenAtMs`) instead of seconds since 2001 (`seenAt`).
    @Test func wireFormatOneIsWhatRelinkdWroteBefore() throws {
        for event in try APIEventPayloadTests.samples() + [
            .disconnected(peripheral: PeripheralID(), reason: .adapterOff),
            .discovered(peripheral: PeripheralID(), advertisement: Advertisement(
                address: try BluetoothAddress(parsing: "C0:00:00:00:00:01", kind: .random), data: AdvertisingData(manufacturerData: [0x004C: [1, 2, 3]]))),
        ] {
            // A kind added within format 2 was never written the old way.
            if case .adapterStateChanged = event { continue }
            if case .peripheralManager = event { continue }
            if case .servicesChanged = event { continue }
            if case .transfer = event { continue }
            // Nor were the write sizes `connected` and `restored` carry within format 2.
            var event = event
            if case .connected(let p, let a, let r, _) = event { event = .connected(peripheral: p, address: a, route: r) }
            if case .restored(let p, let a, let r, _) = event { event = .restored(peripheral: p, address: a, route: r) }
            let wire = try StoreMapping.payload(event)
            var before = String(decoding: try Self.synthesized(event), as: UTF8.self)
            if case .nameUpdated(_, let update) = event {
                for seen in [update.names.advertising, update.names.gap].compactMap({ $0 }) {
                    let seconds = seen.seenAt.timeIntervalSinceReferenceDate
                    let text = seconds == seconds.rounded() ? "\(Int64(seconds))" : "\(seconds)"  // as JSONEncoder writes it
                    before = before.replacingOccurrences(of: #""seenAt":\#(text)"#,
                                                         with: #""seenAtMs":\#(Int64((seen.seenAt.timeIntervalSince1970 * 1000).rounded()))"#)
                }
            }
            if case .discovered = event { before = Self.oldAdvertisementShape(before) }
            #expect(String(decoding: wire, as: UTF8.self) == before)
        }
    }
}
