import Foundation
import RelinkModel

extension RelinkEvent {
    /// `{"valueNotified":{"atMs":T,"characteristic":{"characteristic":C,"service":S},"peripheral":{"uuid":P},"value":[...]}}`,
    /// byte for byte what the general encoder writes (checked by a test), written
    /// directly: it is the one event that comes as fast as a peripheral sends.
    static func valueNotifiedJSON(peripheral: PeripheralID, characteristic: CharacteristicKey, value: [UInt8], atMs: Int64? = nil) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(190 + value.count * 4)
        out.append(contentsOf: #"{"valueNotified":{"#.utf8)
        if let atMs { out.append(contentsOf: #""atMs":\#(atMs),"#.utf8) }
        out.append(contentsOf: #""characteristic":{"characteristic":""#.utf8)
        appendUUID(characteristic.characteristic, to: &out)
        out.append(contentsOf: #"","service":""#.utf8)
        appendUUID(characteristic.service, to: &out)
        out.append(contentsOf: #""},"peripheral":{"uuid":""#.utf8)
        appendUUID(peripheral.uuid, to: &out)
        out.append(contentsOf: #""},"value":["#.utf8)
        for (index, byte) in value.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            if byte >= 100 { out.append(UInt8(ascii: "0") + byte / 100) }
            if byte >= 10 { out.append(UInt8(ascii: "0") + byte / 10 % 10) }
            out.append(UInt8(ascii: "0") + byte % 10)
        }
        out.append(contentsOf: "]}}".utf8)
        return Data(out)
    }

    private static let lowerHex = Array("0123456789abcdef".utf8)
    private static let upperHex = Array("0123456789ABCDEF".utf8)

    /// 16 bytes (`byte(0)` first) as 8-4-4-4-12 hex digits.
    private static func appendUUIDBytes(digits: [UInt8], to out: inout [UInt8], _ byte: (Int) -> UInt8) {
        for index in 0..<16 {
            if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
            let b = byte(index)
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
    }

    /// A Bluetooth UUID as `BluetoothUUID.string` writes it (lower case).
    private static func appendUUID(_ uuid: BluetoothUUID, to out: inout [UInt8]) {
        appendUUIDBytes(digits: lowerHex, to: &out) { index in
            UInt8(truncatingIfNeeded: (index < 8 ? uuid.high : uuid.low) >> (56 - 8 * (index % 8)))
        }
    }

    /// A Foundation UUID as `UUID.uuidString` writes it (upper case).
    private static func appendUUID(_ uuid: UUID, to out: inout [UInt8]) {
        withUnsafeBytes(of: uuid.uuid) { raw in
            appendUUIDBytes(digits: upperHex, to: &out) { raw[$0] }
        }
    }
}

extension RelinkEvent {
    /// The payload by the general encoder, also for `value-notified` (tests
    /// compare it with the direct writer's bytes).
    func encodedByJSONEncoder(at: Date? = nil) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(Wire(self, at: at))
    }
}
