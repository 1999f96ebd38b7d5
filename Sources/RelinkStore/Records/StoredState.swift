public import RelinkModel
/// Everything the store holds except the outbox events themselves: what
/// relinkd loads on start to rebuild every identifier.
public struct StoredState: Hashable, Sendable, Codable {
    /// One restore identifier with all it asked for.
    public struct Identifier: Hashable, Sendable, Codable {
        public var record: RestoreIdentifierRecord
        public var scan: ScanIntent?
        /// Sorted by peripheral identifier.
        public var connections: [ConnectionIntent]
        /// Sorted (see `Subscription.<`).
        public var subscriptions: [Subscription]
        public var outbox: OutboxStatus
        /// Its connection-event registration, if any.
        public var connectionEvents: ConnectionEventRegistration?

        public init(record: RestoreIdentifierRecord, scan: ScanIntent?, connections: [ConnectionIntent],
                    subscriptions: [Subscription], outbox: OutboxStatus, connectionEvents: ConnectionEventRegistration? = nil) {
            self.record = record
            self.connectionEvents = connectionEvents
            self.scan = scan
            self.connections = connections
            self.subscriptions = subscriptions
            self.outbox = outbox
        }
    }

    /// Sorted by identifier.
    public var identifiers: [Identifier]
    /// Sorted by peripheral identifier (lowercase text order).
    public var peripherals: [PeripheralRecord]
    /// Rows that could not be decoded: not loaded, kept in the file.
    public var unreadable: [UnreadableRow]
    /// The adapter status last announced to programs, by adapter name.
    public var adapterStates: [String: AdapterStatus]
    /// The GATT database last read from each peripheral.
    public var gattDatabases: [PeripheralID: GattDatabase]
    /// Each identifier's peripheral role.
    public var peripheralManagers: [RestoreIdentifier: PeripheralManagerRecord] = [:]
    /// The transfers still under way, oldest first.
    public var transfers: [TransferRecord] = []

    /// The loaded state.
    public init(identifiers: [Identifier], peripherals: [PeripheralRecord], unreadable: [UnreadableRow] = [],
                adapterStates: [String: AdapterStatus] = [:], gattDatabases: [PeripheralID: GattDatabase] = [:]) {
        self.identifiers = identifiers
        self.peripherals = peripherals
        self.unreadable = unreadable
        self.adapterStates = adapterStates
        self.gattDatabases = gattDatabases
    }
}
