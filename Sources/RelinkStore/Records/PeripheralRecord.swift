public import Foundation
public import RelinkModel

/// A peripheral relink has met, under its stable relink identifier.
public struct PeripheralRecord: Hashable, Sendable, Codable {
    /// Longest stored name or alias, in UTF-8 bytes (BlueZ names are at most 248).
    public static let maximumNameBytes = 248

    /// Stable relink identifier; never reused for another adapter/address/type.
    public var id: PeripheralID
    /// Adapter, address and address type; unique among peripherals.
    public var address: DeviceAddress
    /// Local Name from the latest advertisement or scan response.
    public var advertisingName: SeenName?
    /// Device Name (0x2A00) read over a connection.
    public var gapName: SeenName?
    /// BlueZ alias, if one was set.
    public var alias: String?
    /// Service UUIDs the peripheral is known to offer.
    public var serviceUUIDs: [BluetoothUUID]
    public var lastSeenAt: Date?
    public var createdAt: Date

    /// - Throws: `StoreError.invalidArgument` for a name or alias longer than `maximumNameBytes`.
    public init(id: PeripheralID, address: DeviceAddress, advertisingName: SeenName? = nil, gapName: SeenName? = nil,
                alias: String? = nil, serviceUUIDs: [BluetoothUUID] = [], lastSeenAt: Date? = nil,
                createdAt: Date) throws(StoreError) {
        let longest = max(advertisingName?.value.utf8.count ?? 0, gapName?.value.utf8.count ?? 0, alias?.utf8.count ?? 0)
        guard longest <= Self.maximumNameBytes else {
            throw .invalidArgument("name or alias longer than \(Self.maximumNameBytes) bytes")
        }
        self.id = id
        self.address = address
        self.advertisingName = advertisingName.map { SeenName($0.value, seenAt: $0.seenAt.roundedToStoredPrecision) }
        self.gapName = gapName.map { SeenName($0.value, seenAt: $0.seenAt.roundedToStoredPrecision) }
        self.alias = alias
        self.serviceUUIDs = serviceUUIDs
        self.lastSeenAt = lastSeenAt?.roundedToStoredPrecision
        self.createdAt = createdAt.roundedToStoredPrecision
    }
}
