/// A device BlueZ reports as connected, found by an already-connected lookup.
public struct ConnectedCandidate: Sendable, Hashable, Codable {
    public var address: BluetoothAddress
    public var name: String?
    public var services: Set<BluetoothUUID>

    public init(address: BluetoothAddress, name: String? = nil, services: Set<BluetoothUUID> = []) {
        self.address = address
        self.name = name
        self.services = services
    }
}
