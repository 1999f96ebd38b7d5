import Foundation
import Testing
@testable import Restoration

@Suite("Domain types")
struct DomainTests {
    @Test(arguments: ["180D", "180d", "0000180d", "0000180D-0000-1000-8000-00805F9B34FB", "0000180d-0000-1000-8000-00805f9b34fb", "0000180d00001000800000805f9b34fb"])
    func uuidFormsNormaliseTo128Bit(_ text: String) throws {
        let uuid = try BluetoothUUID(parsing: text)
        #expect(uuid.string == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortValue == 0x180D)
        #expect(uuid == BluetoothUUID(shortValue: 0x180D))
    }

    @Test func customUUIDHasNoShortForm() throws {
        let uuid = try BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(uuid.string == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(uuid.shortValue == nil)
    }

    @Test(arguments: ["", "18D", "180G", "12345", "0000180d-0000-1000-8000_00805f9b34fb", "0000180d-00001000-8000-00805f9b34fb-", "+180", "１８０Ｄ"])
    func badUUIDsAreRejected(_ text: String) {
        #expect(throws: DomainError.invalidBluetoothUUID(text)) { try BluetoothUUID(parsing: text) }
    }

    @Test func addressesParseInEitherCaseAndPrintUpperCase() throws {
        let address = try BluetoothAddress(parsing: "c0:11:22:aa:bb:0f", kind: .random)
        #expect(address.string == "C0:11:22:AA:BB:0F")
        #expect(address.randomSubtype == .staticAddress)
        #expect(!address.isRotating)
        #expect(try BluetoothAddress(parsing: "4A:00:00:00:00:01", kind: .random).isRotating)
        #expect(try BluetoothAddress(parsing: "4A:00:00:00:00:01").randomSubtype == nil)
        #expect(try BluetoothAddress(parsing: "AA:BB:CC:DD:EE:FF") != BluetoothAddress(parsing: "AA:BB:CC:DD:EE:FF", kind: .random))
    }

    @Test func everyAddressPrintsAsItParses() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let octets = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let address = try BluetoothAddress(octets: octets)
            let expected = octets.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":")
            #expect(address.string == expected)
            #expect(try BluetoothAddress(parsing: address.string) == address)
        }
    }

    @Test(arguments: ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:F", "AA:BB:CC:DD:EE:FG", "AABBCCDDEEFF", "AA-BB-CC-DD-EE-FF", "+A:BB:CC:DD:EE:FF"])
    func badAddressesAreRejected(_ text: String) {
        #expect(throws: DomainError.invalidAddress(text)) { try BluetoothAddress(parsing: text) }
    }

    @Test func addressTypeParsing() throws {
        #expect(try BluetoothAddress.Kind(parsing: "random") == .random)
        #expect(throws: DomainError.invalidAddressType("Random")) { try BluetoothAddress.Kind(parsing: "Random") }
    }

    @Test func restoreIdentifierRules() throws {
        #expect(try RestoreIdentifier("org.example.lock-1_a:b").rawValue == "org.example.lock-1_a:b")
        #expect(throws: DomainError.self) { try RestoreIdentifier("") }
        #expect(throws: DomainError.self) { try RestoreIdentifier("has space") }
        #expect(throws: DomainError.self) { try RestoreIdentifier("slash/") }
        #expect(throws: DomainError.self) { try RestoreIdentifier("é") }
        #expect(throws: DomainError.self) { try RestoreIdentifier(String(repeating: "a", count: 256)) }
        #expect(try RestoreIdentifier(String(repeating: "a", count: 255)).rawValue.count == 255)
    }

    @Test func peripheralIDParsing() throws {
        let id = PeripheralID()
        #expect(try PeripheralID(parsing: id.description) == id)
        #expect(throws: DomainError.invalidPeripheralID("nope")) { try PeripheralID(parsing: "nope") }
    }

    @Test func decodingValidatesToo() {
        let bad = Data(#""no spaces allowed""#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(RestoreIdentifier.self, from: bad) }
        let badAddress = Data(#"{"address":"ZZ:00:00:00:00:00","type":"public"}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(BluetoothAddress.self, from: badAddress) }
    }

    @Test func decodedOptionsAreValidated() throws {
        let good = try JSONEncoder().encode(Fixtures.options())
        #expect(try JSONDecoder().decode(ConnectionOptions.self, from: good) == Fixtures.options())
        var object = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        object["strategies"] = ["scan", "scan"]
        let bad = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DomainError.invalidOptions("a strategy appears twice")) { try JSONDecoder().decode(ConnectionOptions.self, from: bad) }
    }

    @Test func eventsAndRecordsRoundTripThroughCodable() throws {
        let peripheral = PeripheralID()
        let address = Fixtures.lockAddress
        let key = CharacteristicKey(service: Fixtures.heartRate, characteristic: Fixtures.uuid("2A37"))
        var names = PeripheralNames()
        let changeRaw = names.sawGAPName("Band", at: Date(timeIntervalSince1970: 1_800_000_000))
        let change = try #require(changeRaw)
        let events: [RelinkEvent] = [
            .discovered(peripheral: peripheral, advertisement: Advertisement(address: address, localName: "Band", serviceUUIDs: [Fixtures.heartRate], manufacturerData: [0x004C: [1, 2]], rssi: -40)),
            .connected(peripheral: peripheral, address: address, route: .scan),
            .restored(peripheral: peripheral, address: address, route: .knownIdentifier),
            .failedToConnect(peripheral: peripheral, reason: ConnectionFailure(.notPermitted, errorName: "org.bluez.Error.NotPermitted", message: "no")),
            .disconnected(peripheral: peripheral, reason: nil),
            .valueNotified(peripheral: peripheral, characteristic: key, value: [0x06, 0x48]),
            .nameUpdated(peripheral: peripheral, update: names.update(for: change, preferring: .gapName)),
        ]
        let data = try JSONEncoder().encode(events)
        #expect(try JSONDecoder().decode([RelinkEvent].self, from: data) == events)
        #expect(Set(events.map(\.name)).count == events.count)
        #expect(events.allSatisfy { $0.peripheral == peripheral })

        let record = ConnectionIntentRecord(intent: Fixtures.lockIntent, options: Fixtures.options(deadline: .after(.seconds(30))), address: address, phase: .failed(.deadlineExpired))
        #expect(try JSONDecoder().decode(ConnectionIntentRecord.self, from: JSONEncoder().encode(record)) == record)
    }

    @Test func matchRuleNeedsAllAdvertisementCriteria() {
        let rule = MatchRule(services: [Fixtures.lockService], localName: "FrontDoor", manufacturerID: 0x0059)
        let address = Fixtures.otherAddress
        #expect(rule.matches(Advertisement(address: address, localName: "FrontDoor", serviceUUIDs: [Fixtures.lockService], manufacturerData: [0x0059: []])))
        #expect(!rule.matches(Advertisement(address: address, localName: "FrontDoor", serviceUUIDs: [Fixtures.lockService])))
        #expect(!rule.matches(Advertisement(address: address, localName: "Other", serviceUUIDs: [Fixtures.lockService], manufacturerData: [0x0059: []])))
        #expect(!MatchRule().matches(Advertisement(address: address)), "an empty rule matches nothing")
        #expect(MatchRule(address: address).matches(Advertisement(address: address)))
    }
}
