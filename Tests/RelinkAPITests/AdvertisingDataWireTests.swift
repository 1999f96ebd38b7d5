import Foundation
@testable import RelinkAPI
import RelinkModel
import Testing

/// The advertising data in `discovered` (issue 22 item 3): fields added
/// within payload format 2, left out when unknown, and read from events
/// stored before they existed.
@Suite("Advertising data on the wire")
struct AdvertisingDataWireTests {
    static let peripheral = PeripheralID()
    static let address = (try? BluetoothAddress(parsing: "00:00:00:00:00:0A")) ?? BluetoothAddress.placeholder

    @Test func everyFieldIsWrittenAsDocumented() throws {
        let data = AdvertisingData(manufacturerData: [0x004C: [2, 0x15], 0x0059: [7]], serviceData: [BluetoothUUID(shortValue: 0xFEAA): [0x10]],
                                   txPower: -4, appearance: 0x0340, flags: [0x04], raw: [0xFF: [0x4C, 0], 0x16: [0xAA, 0xFE, 0x10]])
        let payload = RelinkEvent.discovered(peripheral: Self.peripheral, advertisement: Advertisement(address: Self.address, data: data))
        let text = String(decoding: try payload.encoded(), as: UTF8.self)
        #expect(text.contains(#""manufacturerData":[76,[2,21],89,[7]]"#))
        #expect(text.contains(#""serviceData":{"0000feaa-0000-1000-8000-00805f9b34fb":[16]}"#))
        #expect(text.contains(#""txPower":-4"#) && text.contains(#""appearance":832"#) && text.contains(#""flags":[4]"#))
        #expect(text.contains(#""advertisingData":[22,[170,254,16],255,[76,0]]"#))
        #expect(try RelinkEvent(kind: .discovered, json: Data(text.utf8)) == payload)
    }

    @Test func unknownFieldsAreLeftOut() throws {
        let text = String(decoding: try RelinkEvent.discovered(peripheral: Self.peripheral, advertisement: Advertisement(address: Self.address)).encoded(), as: UTF8.self)
        for key in ["serviceData", "txPower", "appearance", "flags", "advertisingData"] { #expect(!text.contains(key), "\(key)") }
        #expect(text.contains(#""manufacturerData":[]"#))
    }

    /// An event stored by a relinkd before these fields (same format 2) still reads.
    @Test func aDiscoveryStoredBeforeTheFieldsStillReads() throws {
        let json = #"{"discovered":{"advertisement":{"address":{"address":"00:00:00:00:00:0A","type":"public"},"#
            + #""manufacturerData":[65535,[82,76,1]],"rssi":-61,"serviceUUIDs":[]},"peripheral":{"uuid":"\#(Self.peripheral.uuid.uuidString)"}}}"#
        let payload = try RelinkEvent(kind: .discovered, json: Data(json.utf8))
        guard case .discovered(_, let ad) = payload else { Issue.record("not a discovery"); return }
        #expect(ad.data == AdvertisingData(manufacturerData: [0xFFFF: [0x52, 0x4C, 1]]))
        #expect(ad.rssi == -61)
    }

    @Test func aServiceDataKeyThatIsNotAUUIDIsRefused() {
        let json = #"{"discovered":{"advertisement":{"address":{"address":"00:00:00:00:00:0A","type":"public"},"#
            + #""manufacturerData":[],"serviceData":{"nope":[1]},"serviceUUIDs":[]},"peripheral":{"uuid":"\#(Self.peripheral.uuid.uuidString)"}}}"#
        #expect(throws: DecodingError.self) { try RelinkEvent(kind: .discovered, json: Data(json.utf8)) }
    }
}
