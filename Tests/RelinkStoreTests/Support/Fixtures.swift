import Foundation
@testable import RelinkStore
import RelinkModel

/// Small builders for valid records; every date is a whole millisecond.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_790_000_000.123)

    static func id(_ text: String) throws -> RestoreIdentifier { try RestoreIdentifier(text) }

    static func identifier(_ text: String, uid: UInt32 = 1000, limit: Int = 1000) throws -> RestoreIdentifierRecord {
        try RestoreIdentifierRecord(id: id(text), ownerUID: uid, outboxLimit: limit, createdAt: now)
    }

    static func peripheral(_ last: Int, id: PeripheralID = PeripheralID()) throws -> PeripheralRecord {
        let address = try DeviceAddress(adapter: "hci0", address: String(format: "AA:BB:CC:DD:%02X:%02X", last / 256 % 256, last % 256), addressType: "public")
        return try PeripheralRecord(id: id, address: address, serviceUUIDs: [BluetoothUUID(parsing: "180d")], createdAt: now)
    }

    static func event(_ identifier: RestoreIdentifier, _ text: String) throws -> OutboxEventDraft {
        try OutboxEventDraft(identifier: identifier, kind: "value", payload: Data(text.utf8), createdAt: now)
    }

    /// Where this checkout's `State/` lives.
    static var stateDirectoryOfCheckout: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("State").path
    }
}
