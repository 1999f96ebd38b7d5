import DBus
import Foundation
import RelinkAPI
import RelinkClient
import RelinkModel
import Testing

/// The client library's side of advertising data: prefixes from relinkctl's
/// text, the scan options it sends, and a `discovered` event's iBeacon.
@Suite struct AdvertisingClientTests {
    @Test func prefixesParseFromTheirTextAndBadOnesAreInvalidArguments() throws {
        let prefixes = try RelinkArguments.dataPrefixes(manufacturer: ["0x004C:0215", "ffff:52/f0"], service: ["feaa:20"])
        #expect(Set(prefixes.map(\.text)) == ["manufacturer:0x004c:0215", "manufacturer:0xffff:52/f0",
                                              "service:0000feaa-0000-1000-8000-00805f9b34fb:20"])
        let tooLong = "0x004c:" + String(repeating: "00", count: 253)
        for (m, s) in [([tooLong], []), (["zz:00"], []), ([], ["feaa:2"]), (["004c:0215/ff"], []),
                       ((0..<17).map { String(format: "%04x:", $0) }, [])] as [([String], [String])] {
            #expect(throws: RelinkClientError.self, "\(m) \(s)") { try RelinkArguments.dataPrefixes(manufacturer: m, service: s) }
        }
    }

    @Test func anIBeaconScanSendsTheIBeaconPrefix() throws {
        let options = RelinkScanOptions.iBeacons()
        #expect(options.dataPrefixes == [IBeacon.scanPrefix] && !options.allowDuplicates)
    }

    @Test func aDiscoveredEventGivesItsAdvertisementAndIBeacon() throws {
        let beacon = IBeacon(proximityUUID: UUID(), major: 3, minor: 4, measuredPower: -61)
        let address = try BluetoothAddress(parsing: "00:00:00:00:00:04")
        let payload = RelinkEvent.discovered(peripheral: PeripheralID(), advertisement: Advertisement(
            address: address, data: AdvertisingData(manufacturerData: [IBeacon.companyID: beacon.frame]), rssi: -70))
        let event = RelinkClientEvent(sequence: 9, kind: "discovered", payloadJSON: String(decoding: try payload.encoded(), as: UTF8.self))
        #expect(event.advertisement?.address == address)
        #expect(event.iBeacon == beacon)
        let other = RelinkClientEvent(sequence: 10, kind: "discovered", payloadJSON: String(decoding: try RelinkEvent.discovered(
            peripheral: PeripheralID(), advertisement: Advertisement(address: address)).encoded(), as: UTF8.self))
        #expect(other.iBeacon == nil && other.advertisement != nil)
    }
}
