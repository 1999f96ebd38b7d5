import Foundation
import Testing
import RelinkModel
@testable import Restoration

@Suite("Core values through Codable")
struct CodableTests {
    @Test func decodedOptionsAreValidated() throws {
        let good = try JSONEncoder().encode(Fixtures.options())
        #expect(try JSONDecoder().decode(ConnectionOptions.self, from: good) == Fixtures.options())
        var object = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        object["strategies"] = ["scan", "scan"]
        let bad = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DomainError.invalidOptions("a strategy appears twice")) { try JSONDecoder().decode(ConnectionOptions.self, from: bad) }
    }

    /// Events travel in RelinkAPI's wire form only (`EventPayloadTests`);
    /// here, that each has a kind of its own and names its peripheral.
    @Test func eventsHaveDistinctKindsAndRecordsRoundTripThroughCodable() throws {
        let peripheral = PeripheralID()
        let address = Fixtures.lockAddress
        let key = CharacteristicKey(service: Fixtures.heartRate, characteristic: Fixtures.uuid("2A37"))
        var names = PeripheralNames()
        let changeRaw = names.sawGAPName("Band", at: Date(timeIntervalSince1970: 1_800_000_000))
        let change = try #require(changeRaw)
        let events: [RelinkEvent] = [
            .discovered(peripheral: peripheral, advertisement: Advertisement(address: address, localName: "Band", serviceUUIDs: [Fixtures.heartRate], data: AdvertisingData(manufacturerData: [0x004C: [1, 2]]), rssi: -40)),
            .connected(peripheral: peripheral, address: address, route: .scan),
            .restored(peripheral: peripheral, address: address, route: .knownIdentifier),
            .failedToConnect(peripheral: peripheral, reason: ConnectionFailure(.notPermitted, errorName: "org.bluez.Error.NotPermitted", message: "no")),
            .disconnected(peripheral: peripheral, reason: nil),
            .valueNotified(peripheral: peripheral, characteristic: key, value: [0x06, 0x48]),
            .nameUpdated(peripheral: peripheral, update: names.update(for: change, preferring: .gapName)),
        ]
        #expect(Set(events.map(\.kind)).count == events.count)
        #expect(events.map(\.name) == events.map(\.kind.rawValue))
        #expect(events.allSatisfy { $0.peripheral == peripheral })

        let record = ConnectionIntentRecord(intent: Fixtures.lockIntent, options: Fixtures.options(deadline: .after(.seconds(30))), address: address, phase: .failed(.deadlineExpired))
        #expect(try JSONDecoder().decode(ConnectionIntentRecord.self, from: JSONEncoder().encode(record)) == record)
    }
}
