import BlueZ
import Foundation
import RelinkStore
import Restoration
import Testing
@testable import RelinkDaemon

/// Pure pieces of the daemon: error class mapping and store round trips.
@Suite struct MappingTests {
    @Test(arguments: BlueZErrorClass.allCases)
    func everyBlueZClassMapsToTheCoreClass(_ c: BlueZErrorClass) {
        let expected: Restoration.FailureClass = switch c {
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
            intent: ConnectionIntentID(identifier: try CoreIdentifier("org.example.lock"), peripheral: PeripheralID()),
            options: options, address: try BluetoothAddress(parsing: "00:00:00:00:00:02"), phase: phase)
    }

    func peripheralRow(for record: ConnectionIntentRecord) throws -> PeripheralRecord {
        try PeripheralRecord(
            id: record.intent.peripheral.uuid,
            address: DeviceAddress(adapter: "hci0", address: "00:00:00:00:00:02", addressType: .public),
            serviceUUIDs: [StoreUUID("180d")], createdAt: Date())
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
        let draft = try StoreMapping.draft(.valueNotified(peripheral: peripheral, characteristic: key, value: [1, 2]), for: try CoreIdentifier("a"))
        #expect(draft.kind == "value-notified")
        let decoded = try JSONDecoder().decode(RelinkEvent.self, from: draft.payload)
        #expect(decoded == .valueNotified(peripheral: peripheral, characteristic: key, value: [1, 2]))
    }
}
