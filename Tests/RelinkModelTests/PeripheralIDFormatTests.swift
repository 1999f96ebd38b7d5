import Foundation
import Testing
@testable import RelinkModel

/// ``PeripheralID``'s description and order are written without
/// Foundation's formatting (issue 31: start-up asked for them many times per
/// intent); they must stay exactly `uuidString` and its order.
struct PeripheralIDFormatTests {
    @Test func descriptionIsUUIDString() throws {
        var uuids = (0..<2000).map { _ in UUID() }
        uuids.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        uuids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        uuids.append(UUID(uuid: (0x09, 0x0A, 0x90, 0xA0, 0x0F, 0xF0, 0x1B, 0xB1, 0x7E, 0xE7, 0x3C, 0xC3, 0x5D, 0xD5, 0x6A, 0xA6)))
        for uuid in uuids {
            #expect(PeripheralID(uuid).description == uuid.uuidString)
            #expect(try PeripheralID(parsing: PeripheralID(uuid).description) == PeripheralID(uuid))
        }
    }

    @Test func orderIsTheOrderOfUUIDStrings() {
        let ids = (0..<500).map { _ in PeripheralID() }
        #expect(ids.sorted().map(\.description) == ids.map(\.uuid.uuidString).sorted())
        for (a, b) in zip(ids, ids.dropFirst()) {
            #expect((a < b) == (a.uuid.uuidString < b.uuid.uuidString))
            #expect(!(a < a))
        }
    }
}
