public import RelinkModel
/// What relinkd does at start-up, without any client present, computed from
/// the stored identifiers: resume every scan, pending connection and
/// subscription; adopt links BlueZ still holds.
///
/// Rules:
/// * every identifier's scan is registered with the ``ScanCoordinator``;
/// * intents in phase `pending` or `connected` are resumed; `connected` ones
///   (owners and sharers of a link alike) are started with
///   `restoringConnected` (their link is adopted and reported `restored`);
///   `idle`, `failed` and `cancelled` ones are not (cancelled ones are listed
///   for deletion);
/// * ownership of each peripheral goes first to an intent that was
///   connected, then to the earliest identifier in sort order, so two
///   restored intents never race for one device; the others share;
/// * every subscription is registered with the ``SubscriptionPlanner``
///   (whose links all start down: BlueZ ended the old notify sessions when
///   the previous relinkd left the bus).
public struct StartupPlan: Sendable, Hashable {
    /// One intent to resume.
    public struct Resume: Sendable, Hashable {
        public var record: ConnectionIntentRecord
        public var restoringConnected: Bool
        /// The intent's claim in the ownership registry after the plan.
        public var claim: OwnershipRegistry.Claim
    }

    public var scans: [ScanClient: ScanIntent]
    /// In start order: owners before sharers.
    public var resume: [Resume]
    public var subscriptions: [Subscription]
    /// Intents not resumed (idle or failed), kept in the store.
    public var dormant: [ConnectionIntentRecord]
    /// Cancelled intents the store can delete.
    public var obsolete: [ConnectionIntentRecord]

    /// Builds the plan and fills `registry` with the claims it makes.
    public init(states: [IdentifierState], registry: inout OwnershipRegistry) {
        scans = [:]
        resume = []
        dormant = []
        obsolete = []
        var subscriptions: [Subscription] = []
        var resumable: [(record: ConnectionIntentRecord, connected: Bool)] = []
        for state in states.sorted(by: { $0.identifier < $1.identifier }) {
            if let scan = state.scan { scans[.identifier(state.identifier)] = scan }
            subscriptions += state.subscriptions
            for record in state.connections {
                switch record.phase {
                case .pending: resumable.append((record, false))
                case .connected: resumable.append((record, true))
                case .idle, .failed: dormant.append(record)
                case .cancelled: obsolete.append(record)
                }
            }
        }
        // Connected first, then identifier order: the first claim owns.
        resumable.sort { lhs, rhs in
            lhs.connected != rhs.connected ? lhs.connected : lhs.record.intent < rhs.record.intent
        }
        for (record, connected) in resumable {
            let claim = registry.claim(record.intent)
            resume.append(Resume(record: record, restoringConnected: connected, claim: claim))
        }
        self.subscriptions = subscriptions.sorted { ($0.identifier, $0.peripheral, $0.characteristic) < ($1.identifier, $1.peripheral, $1.characteristic) }
    }
}
