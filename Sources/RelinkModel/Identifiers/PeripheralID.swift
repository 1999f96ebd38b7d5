#if canImport(FoundationEssentials)
public import struct FoundationEssentials.UUID
#else
public import struct Foundation.UUID
#endif

/// relink's stable identifier for a peripheral (like `CBPeripheral.identifier`).
///
/// It is assigned the first time relink sees a device and kept in the store,
/// mapped to adapter + address + address type; it does not change when BlueZ
/// forgets the device or when the device's address is re-learned by a scan.
public struct PeripheralID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    /// A fresh random identifier.
    public init() { self.uuid = UUID() }

    /// Parses the textual form of a UUID.
    /// - Throws: ``DomainError/invalidPeripheralID(_:)`` when `string` is not a UUID.
    public init(parsing string: String) throws(DomainError) {
        guard let uuid = UUID(uuidString: string) else { throw .invalidPeripheralID(string) }
        self.uuid = uuid
    }

    public var description: String { uuid.uuidString }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.uuid.uuidString < rhs.uuid.uuidString }
}
