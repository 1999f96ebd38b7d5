import Foundation

/// The scan a restore identifier asked for, kept until it is stopped.
public struct ScanIntent: Hashable, Sendable, Codable {
    public var identifier: RestoreIdentifier
    /// Service UUIDs to scan for; empty means any peripheral.
    public var serviceUUIDs: [BluetoothUUID]
    /// Report every advertisement instead of one discovery per peripheral.
    public var allowDuplicates: Bool
    public var updatedAt: Date

    public init(identifier: RestoreIdentifier, serviceUUIDs: [BluetoothUUID], allowDuplicates: Bool, updatedAt: Date) {
        self.identifier = identifier
        self.serviceUUIDs = serviceUUIDs
        self.allowDuplicates = allowDuplicates
        self.updatedAt = updatedAt.roundedToStoredPrecision
    }
}
