public import RelinkModel
/// What the store keeps of a connection intent, handed over in `persist`
/// actions at the moments that change it (start, connected, address
/// re-learned, disconnected, failed, cancelled): not on every retry, so a lock
/// pending for days does not write on every round.
public struct ConnectionIntentRecord: Sendable, Hashable, Codable {
    public enum Phase: Sendable, Hashable, Codable {
        /// Trying, backing off, or waiting: a restart resumes it.
        case pending
        /// The link is up: a restart adopts it and reports `restored`.
        case connected
        /// Disconnected and not reconnecting (`reconnectAfterDisconnect` off).
        case idle
        /// Gave up with this failure: a restart does not resume it.
        case failed(ConnectionFailure)
        /// Cancelled by its client: the store may delete it.
        case cancelled
    }

    public var intent: ConnectionIntentID
    public var options: ConnectionOptions
    /// The address last used to reach the peripheral.
    public var address: BluetoothAddress?
    public var phase: Phase

    public init(intent: ConnectionIntentID, options: ConnectionOptions, address: BluetoothAddress?, phase: Phase) {
        self.intent = intent
        self.options = options
        self.address = address
        self.phase = phase
    }
}
