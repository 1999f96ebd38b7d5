/// Where a peripheral lives for BlueZ: adapter, Bluetooth address and address type.
public struct DeviceAddress: Hashable, Sendable, Codable, CustomStringConvertible {
    /// BlueZ's two LE address types.
    public enum AddressType: String, Hashable, Sendable, Codable, CaseIterable {
        case `public`
        case random
    }

    /// Adapter name as BlueZ uses it (`hci0`): 1 to 32 characters, lowercase letters, digits, `_`, `-`.
    public let adapter: String
    /// Bluetooth address, uppercase, `AA:BB:CC:DD:EE:FF`.
    public let address: String
    public let addressType: AddressType

    /// Validates and normalises (address to uppercase).
    /// - Throws: `StoreError.invalidArgument` for a bad adapter name or address.
    public init(adapter: String, address: String, addressType: AddressType) throws(StoreError) {
        guard (1...32).contains(adapter.utf8.count), adapter.utf8.allSatisfy({
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }) else { throw .invalidArgument("bad adapter name: \(adapter.prefix(40))") }
        // Byte-wise: `XX:XX:XX:XX:XX:XX`, hex digits in either case.
        guard address.utf8.count == 17 else { throw .invalidArgument("bad Bluetooth address: \(address.prefix(40))") }
        var text = address
        let upper: [UInt8]? = text.withUTF8 { bytes in
            var result = [UInt8](repeating: 0, count: 17)
            for index in 0..<17 {
                let byte = bytes[index]
                if index % 3 == 2 {
                    guard byte == UInt8(ascii: ":") else { return nil }
                    result[index] = byte
                } else if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) {
                    result[index] = byte
                } else if byte >= 0x61 && byte <= 0x66 {
                    result[index] = byte - 0x20
                } else {
                    return nil
                }
            }
            return result
        }
        guard let upper else { throw .invalidArgument("bad Bluetooth address: \(address.prefix(40))") }
        self.address = String(decoding: upper, as: UTF8.self)
        self.adapter = adapter
        self.addressType = addressType
    }

    public var description: String { "\(adapter)/\(address)/\(addressType.rawValue)" }
}
