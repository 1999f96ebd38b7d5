/// Where a peripheral lives for BlueZ: an adapter and a Bluetooth address
/// (with its LE address type).
public struct DeviceAddress: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Adapter name as BlueZ uses it (`hci0`): 1 to 32 characters, lowercase
    /// letters, digits, `_`, `-`.
    public let adapter: String
    /// The device's address and address type.
    public let address: BluetoothAddress

    /// The LE address type (`public` or `random`).
    public var addressType: BluetoothAddress.Kind { address.kind }

    /// Validates the adapter name.
    /// - Throws: ``DomainError/invalidAdapter(_:)`` for a bad adapter name.
    public init(adapter: String, address: BluetoothAddress) throws(DomainError) {
        try Self.validateAdapter(adapter)
        self.adapter = adapter
        self.address = address
    }

    /// Parses the address text and type, and validates the adapter name.
    /// - Throws: ``DomainError`` for a bad adapter name, address or type.
    public init(adapter: String, address: String, addressType: String) throws(DomainError) {
        try self.init(adapter: adapter, address: BluetoothAddress(parsing: address, kind: .init(parsing: addressType)))
    }

    /// Checks an adapter name by the rule above.
    /// - Throws: ``DomainError/invalidAdapter(_:)``.
    public static func validateAdapter(_ adapter: String) throws(DomainError) {
        guard (1...32).contains(adapter.utf8.count), adapter.utf8.allSatisfy({
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }) else { throw .invalidAdapter(adapter) }
    }

    /// `hci0/AA:BB:CC:DD:EE:FF/public`.
    public var description: String { "\(adapter)/\(address.string)/\(addressType.rawValue)" }
}
