/// Where a peripheral lives for BlueZ: adapter, Bluetooth address and address type.
public struct DeviceAddress: Hashable, Sendable, Codable, CustomStringConvertible {
    /// BlueZ's two LE address types.
    public enum AddressType: String, Hashable, Sendable, Codable {
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
        guard (1...32).contains(adapter.count),
              adapter.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" })
        else { throw .invalidArgument("bad adapter name: \(adapter.prefix(40))") }
        let upper = address.uppercased()
        let octets = upper.split(separator: ":", omittingEmptySubsequences: false)
        guard octets.count == 6, octets.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isHexDigit && $0.isASCII } }) else {
            throw .invalidArgument("bad Bluetooth address: \(address.prefix(40))")
        }
        self.adapter = adapter
        self.address = upper
        self.addressType = addressType
    }

    public var description: String { "\(adapter)/\(address)/\(addressType.rawValue)" }
}
