import Foundation
import Testing
@testable import RelinkModel

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

    @Test(arguments: ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:F", "AA:BB:CC:DD:EE:FG", "AABBCCDDEEFF", "AA-BB-CC-DD-EE-FF", "+A:BB:CC:DD:EE:FF",
                      "AA:BB:CC:DD:EEF:F", "AA:BB:CC:DD:EE::F", "AA:BB:CC:DD:EE:FF ", " AA:BB:CC:DD:EE:F", "AA:BB:CC:DD:EE:F\u{E9}",
                      "AA:BB:CC:DD:EE:\u{0663}\u{0663}"])
    func badAddressesAreRejected(_ text: String) {
        #expect(throws: DomainError.invalidAddress(text)) { try BluetoothAddress(parsing: text) }
    }

    @Test func eitherCaseParsesToTheSameOctets() throws {
        let lower = try BluetoothAddress(parsing: "0a:bc:de:f0:19:8f")
        #expect(lower.octets == [0x0A, 0xBC, 0xDE, 0xF0, 0x19, 0x8F])
        #expect(try BluetoothAddress(parsing: "0A:BC:DE:F0:19:8F") == lower)
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
        #expect(throws: DomainError.self) { try RestoreIdentifier(String(repeating: "a", count: 129)) }
        #expect(try RestoreIdentifier(String(repeating: "a", count: 128)).rawValue.count == 128)
        #expect(throws: DomainError.invalidRestoreIdentifier(".lock", reason: "must start with a letter or a digit")) { try RestoreIdentifier(".lock") }
        #expect(throws: DomainError.self) { try RestoreIdentifier("-lock") }
    }

    @Test("identifiers the rules refuse", arguments: [
        "", String(repeating: "a", count: 129), "-leading", "has space", "ünicode", "a/b",
    ])
    func invalidIdentifiers(text: String) {
        #expect(throws: DomainError.self) { try RestoreIdentifier(text) }
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

    @Test func matchRuleNeedsAllAdvertisementCriteria() {
        let lockService = BluetoothUUID(high: 0x8e7f_1a00_4b2c_4d1e, low: 0x9a3f_7265_6c69_6e6b)
        let rule = MatchRule(services: [lockService], localName: "FrontDoor", manufacturerID: 0x0059)
        let address = try! BluetoothAddress(parsing: "C0:00:00:00:00:09", kind: .random)
        #expect(rule.matches(Advertisement(address: address, localName: "FrontDoor", serviceUUIDs: [lockService], data: AdvertisingData(manufacturerData: [0x0059: []]))))
        #expect(!rule.matches(Advertisement(address: address, localName: "FrontDoor", serviceUUIDs: [lockService])))
        #expect(!rule.matches(Advertisement(address: address, localName: "Other", serviceUUIDs: [lockService], data: AdvertisingData(manufacturerData: [0x0059: []]))))
        #expect(!MatchRule().matches(Advertisement(address: address)), "an empty rule matches nothing")
        #expect(MatchRule(address: address).matches(Advertisement(address: address)))
    }

    @Test func aRejectedValueIsEchoedShortened() {
        let long = String(repeating: "x", count: 10_000)
        let message = DomainError.invalidRestoreIdentifier(long, reason: "too long").description
        #expect(message.count < 200, "a 10,000-character value must not be echoed whole")
        #expect(message.contains("10000 bytes"))
        #expect(DomainError.invalidAddress("AA").description.contains(#""AA""#))
    }

    @Test func uuidBytesRoundTrip() throws {
        let uuid = try BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(uuid.bytes.first == 0x6E && uuid.bytes.last == 0x9E && uuid.bytes.count == 16)
        let back = uuid.bytes.withUnsafeBytes { BluetoothUUID(bytes: $0) }
        #expect(back == uuid)
        #expect([UInt8](repeating: 0, count: 15).withUnsafeBytes { BluetoothUUID(bytes: $0) } == nil)
    }

    @Test func deviceAddressValidatesItsAdapter() throws {
        let address = try BluetoothAddress(parsing: "00:00:00:00:00:02")
        #expect(try DeviceAddress(adapter: "hci0", address: address).description == "hci0/00:00:00:00:00:02/public")
        #expect(throws: DomainError.invalidAdapter("HCI0")) { try DeviceAddress(adapter: "HCI0", address: address) }
        #expect(throws: DomainError.invalidAdapter("")) { try DeviceAddress(adapter: "", address: address) }
        #expect(throws: DomainError.invalidAddressType("other")) { try DeviceAddress(adapter: "hci0", address: "00:00:00:00:00:02", addressType: "other") }
    }

    @Test func adapterStatusKeepsEachRoleOnceInOrderAndParsesOnlyItsNames() throws {
        let status = AdapterStatus(.poweredOn, roles: [.centralPeripheral, .central, .central])
        #expect(status.roles == [.central, .centralPeripheral])
        #expect(status.description == "poweredOn (central, central-peripheral)")
        #expect(AdapterRole.parsing(["peripheral", "central-peripheral", "observer", "central", "peripheral"]) == [.central, .peripheral, .centralPeripheral])
        #expect(try AdapterState(parsing: "notPermitted") == .notPermitted)
        #expect(throws: DomainError.invalidAdapterState("unauthorized")) { try AdapterState(parsing: "unauthorized") }
        #expect(throws: DomainError.invalidAdapterRole("observer")) { try AdapterRole(parsing: "observer") }
        #expect(try AdapterRole(parsing: "central-peripheral") == .centralPeripheral)
    }
}
