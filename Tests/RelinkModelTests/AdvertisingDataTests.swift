import Foundation
import Testing
import RelinkModel

@Suite("Advertising data, data prefixes, iBeacon")
struct AdvertisingDataTests {
    static let beaconUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let address = try! BluetoothAddress(parsing: "00:00:00:00:00:0A")

    // MARK: prefixes

    @Test func aPrefixMatchesDataThatStartsWithIt() throws {
        let prefix = try AdvertisingDataPrefix(.manufacturer(0x004C), bytes: [0x02, 0x15])
        #expect(prefix.matches([0x02, 0x15, 0xAA]))
        #expect(prefix.matches([0x02, 0x15]))
        #expect(!prefix.matches([0x02, 0x16, 0xAA]))
        #expect(!prefix.matches([0x02]), "a prefix longer than the data does not match")
        #expect(!prefix.matches([]))
        #expect(try AdvertisingDataPrefix(.manufacturer(1), bytes: []).matches([]), "an empty prefix: the field is present")
    }

    @Test func aMaskKeepsOnlyItsBits() throws {
        let prefix = try AdvertisingDataPrefix(.manufacturer(0xFFFF), bytes: [0x10, 0xAB], mask: [0xF0, 0xFF])
        #expect(prefix.matches([0x1F, 0xAB]))
        #expect(!prefix.matches([0x2F, 0xAB]))
        #expect(!prefix.matches([0x10, 0xAC]))
    }

    @Test func aPrefixAppliesToItsFieldOnly() throws {
        let data = AdvertisingData(manufacturerData: [0xFFFF: [1, 2]], serviceData: [BluetoothUUID(shortValue: 0x180D): [9]])
        #expect(try AdvertisingDataPrefix(.manufacturer(0xFFFF), bytes: [1]).matches(data))
        #expect(!(try AdvertisingDataPrefix(.manufacturer(0x004C), bytes: [1]).matches(data)))
        #expect(try AdvertisingDataPrefix(.service(BluetoothUUID(shortValue: 0x180D)), bytes: [9]).matches(data))
        #expect(!(try AdvertisingDataPrefix(.service(BluetoothUUID(shortValue: 0x180F)), bytes: []).matches(data)))
    }

    @Test func aPrefixLongerThanAnyAdvertisementCarriesIsRefused() throws {
        #expect(AdvertisingDataPrefix.maximumLength(for: .manufacturer(1)) == 252)
        #expect(AdvertisingDataPrefix.maximumLength(for: .service(BluetoothUUID(shortValue: 0x180D))) == 252)
        #expect(AdvertisingDataPrefix.maximumLength(for: .service(BluetoothUUID(shortValue: 0x1234_5678))) == 250)
        let custom = try BluetoothUUID(parsing: "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b")
        #expect(AdvertisingDataPrefix.maximumLength(for: .service(custom)) == 238)
        _ = try AdvertisingDataPrefix(.manufacturer(1), bytes: Array(repeating: 0, count: 252))
        #expect(throws: DomainError.self) { try AdvertisingDataPrefix(.manufacturer(1), bytes: Array(repeating: 0, count: 253)) }
        #expect(throws: DomainError.self) { try AdvertisingDataPrefix(.service(custom), bytes: Array(repeating: 0, count: 239)) }
        #expect(throws: DomainError.self) { try AdvertisingDataPrefix(.manufacturer(1), bytes: [1, 2], mask: [0xFF]) }
    }

    @Test func theTextFormRoundTrips() throws {
        let forms = ["manufacturer:0x004c:0215", "manufacturer:0xffff:524c/ffff", "manufacturer:0x0001:",
                     "service:0000180d-0000-1000-8000-00805f9b34fb:01"]
        for text in forms { #expect(try AdvertisingDataPrefix(parsing: text).text == text) }
        #expect(try AdvertisingDataPrefix(parsing: "4C:02 15", as: .manufacturer).text == "manufacturer:0x004c:0215")
        #expect(try AdvertisingDataPrefix(parsing: "0x004C", as: .manufacturer).bytes == [])
        #expect(try AdvertisingDataPrefix(parsing: "180d:01/0f", as: .service).mask == [0x0F])
    }

    @Test(arguments: ["", "manufacturer", "vendor:004c:02", "manufacturer:12345:00", "manufacturer:zz:00", "manufacturer:004c:0",
                      "manufacturer:004c:02/0", "service:180g:00", "manufacturer:004c:0215/ff"])
    func badTextIsRefused(_ text: String) {
        #expect(throws: DomainError.self) { try AdvertisingDataPrefix(parsing: text) }
    }

    // MARK: scan intents and match rules

    @Test func aScanWithPrefixesWantsAdvertisementsMatchingAny() throws {
        let beacon = Advertisement(address: Self.address, data: AdvertisingData(manufacturerData: [0x004C: IBeacon(
            proximityUUID: Self.beaconUUID, major: 1, minor: 2, measuredPower: -59).frame]))
        let lock = Advertisement(address: try BluetoothAddress(parsing: "00:00:00:00:00:02"), data: AdvertisingData(manufacturerData: [0xFFFF: [0x52, 0x4C, 1]]))
        let scan = ScanIntent(dataPrefixes: [IBeacon.scanPrefix])
        #expect(scan.wants(beacon))
        #expect(!scan.wants(lock))
        let both = ScanIntent(dataPrefixes: [IBeacon.scanPrefix, try AdvertisingDataPrefix(parsing: "manufacturer:ffff:52")])
        #expect(both.wants(lock) && both.wants(beacon))
        #expect(ScanIntent().wants(lock), "no prefix: every advertisement")
    }

    @Test func aMatchRuleNeedsEveryPrefix() throws {
        let data = AdvertisingData(manufacturerData: [0xFFFF: [0x52, 0x4C]], serviceData: [BluetoothUUID(shortValue: 0x180D): [1]])
        let ad = Advertisement(address: try BluetoothAddress(parsing: "00:00:00:00:00:09"), data: data)
        let m = try AdvertisingDataPrefix(parsing: "manufacturer:ffff:524c"), s = try AdvertisingDataPrefix(parsing: "service:180d:01")
        #expect(MatchRule(dataPrefixes: [m, s]).matches(ad))
        #expect(!MatchRule(dataPrefixes: [m, try AdvertisingDataPrefix(parsing: "service:180d:02")]).matches(ad))
        #expect(MatchRule(dataPrefixes: [m]).hasAdvertisementCriteria)
        let connected = ConnectedCandidate(address: try BluetoothAddress(parsing: "00:00:00:00:00:09"), name: nil, services: [])
        #expect(!MatchRule(dataPrefixes: [m]).matches(connected), "a connected device has no advertising data to match")
    }

    @Test func thePayloadIgnoresTheRSSI() {
        let a = Advertisement(address: Self.address, data: AdvertisingData(serviceData: [BluetoothUUID(shortValue: 0xFEAA): [0x10]]), rssi: -60)
        var b = a
        b.rssi = -70
        #expect(a.hasSamePayload(as: b) && a.payloadHash == b.payloadHash)
        b.data.serviceData[BluetoothUUID(shortValue: 0xFEAA)] = [0x11]
        #expect(!a.hasSamePayload(as: b))
    }

    // MARK: iBeacon

    static let frame: [UInt8] = [0x02, 0x15,
                                 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                 0x00, 0x01, 0x01, 0x02, 0xC5]

    @Test func anIBeaconFrameIsDecoded() throws {
        let beacon = try #require(IBeacon(frame: Self.frame))
        #expect(beacon.proximityUUID == Self.beaconUUID)
        #expect(beacon.major == 1)
        #expect(beacon.minor == 0x0102)
        #expect(beacon.measuredPower == -59)
        #expect(beacon.frame == Self.frame)
        #expect(IBeacon(AdvertisingData(manufacturerData: [0x004C: Self.frame])) == beacon)
        #expect(IBeacon.scanPrefix.matches(Self.frame))
    }

    @Test func malformedFramesAreNotIBeacons() {
        #expect(IBeacon(frame: []) == nil)
        #expect(IBeacon(frame: Array(Self.frame.dropLast())) == nil, "one byte short")
        #expect(IBeacon(frame: Self.frame + [0]) == nil, "one byte too many")
        var otherType = Self.frame
        otherType[0] = 0x10
        #expect(IBeacon(frame: otherType) == nil)
        var otherLength = Self.frame
        otherLength[1] = 0x14
        #expect(IBeacon(frame: otherLength) == nil)
        #expect(IBeacon(AdvertisingData(manufacturerData: [0x0059: Self.frame])) == nil, "another company's data")
        #expect(IBeacon(AdvertisingData()) == nil)
    }
}
