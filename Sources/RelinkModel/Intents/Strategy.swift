/// The three ways to reach a peripheral, in CoreBluetooth's order.
public enum Strategy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Connect the device BlueZ still knows at the stored address
    /// (`retrievePeripheralsWithIdentifiers:` then `connect`).
    case knownIdentifier
    /// Adopt a device BlueZ already has connected (by another client) that
    /// offers the wanted services (`retrieveConnectedPeripheralsWithServices:`).
    case alreadyConnected
    /// Scan with the intent's filter, match the peripheral, connect.
    case scan

    /// The default order: known identifier, already connected, scan.
    public static let defaultOrder: [Strategy] = [.knownIdentifier, .alreadyConnected, .scan]
}

/// How a connection came about, carried in `connected` events and the journal.
public enum ConnectRoute: String, Sendable, Hashable, Codable {
    case knownIdentifier
    case alreadyConnected
    case scan
    /// BlueZ connected the device on its own (kernel background auto-connect).
    case backgroundAutoConnect
    /// Another intent owns the link; this one shares it.
    case sharedLink

    public init(_ strategy: Strategy) {
        switch strategy {
        case .knownIdentifier: self = .knownIdentifier
        case .alreadyConnected: self = .alreadyConnected
        case .scan: self = .scan
        }
    }
}
