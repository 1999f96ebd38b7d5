public import RelinkModel
/// Everything one restore identifier asked for: what the store keeps under
/// it and what a restart rebuilds (CoreBluetooth's restored state:
/// scan services and options, connected and pending peripherals, subscribed
/// characteristics), plus relink's name preference.
public struct IdentifierState: Sendable, Hashable, Codable {
    public var identifier: RestoreIdentifier
    /// The identifier's own scan, if it is scanning.
    public var scan: ScanIntent?
    public var namePreference: NamePreference
    /// Its connection intents, one per peripheral.
    public var connections: [ConnectionIntentRecord]
    public var subscriptions: Set<Subscription>

    public init(identifier: RestoreIdentifier, scan: ScanIntent? = nil, namePreference: NamePreference = .gapName, connections: [ConnectionIntentRecord] = [], subscriptions: Set<Subscription> = []) {
        self.identifier = identifier
        self.scan = scan
        self.namePreference = namePreference
        self.connections = connections
        self.subscriptions = subscriptions
    }

    /// Checks that every connection and subscription belongs to this
    /// identifier, that no peripheral has two intents, and that options are valid.
    /// - Throws: ``DomainError/invalidOptions(_:)`` naming the broken rule.
    public func validate() throws(DomainError) {
        var peripherals: Set<PeripheralID> = []
        for record in connections {
            if record.intent.identifier != identifier { throw .invalidOptions("intent \(record.intent) is not under \(identifier)") }
            if !peripherals.insert(record.intent.peripheral).inserted { throw .invalidOptions("two intents for \(record.intent.peripheral)") }
            try record.options.validate()
        }
        if let wrong = subscriptions.first(where: { $0.identifier != identifier }) {
            throw .invalidOptions("subscription of \(wrong.identifier) is not under \(identifier)")
        }
    }
}

extension ConnectionStateMachine {
    /// A machine for a stored intent (not started: call
    /// ``start(restoringConnected:)``, or use a ``StartupPlan``).
    public init(record: ConnectionIntentRecord, clock: C, random: any RandomSource = SplitMixRandom()) {
        self.init(intent: record.intent, options: record.options, knownAddress: record.address, clock: clock, random: random)
    }
}
