import RelinkAPI
import RelinkModel
import RelinkStore
import Restoration

/// What each user keeps in relinkd, counted from the loop's tables (all
/// copy-on-write, so a ``StatusSnapshot`` takes them in constant time and
/// counts off the loop). The decision itself is ``UserBounds/exceeded(by:use:uid:)``.
struct QuotaLedger: Sendable {
    var identifiers: Set<RestoreIdentifier>
    var owners: [RestoreIdentifier: UInt32]
    var intents: Dictionary<ConnectionIntentID, Machine>.Keys
    var subscriptions: Set<Subscription>
    var published: [RestoreIdentifier: PeripheralManagerRecord]
    var transfers: [TransferID: RunningTransfer]
    var outboxes: [RestoreIdentifier: OutboxCursor]

    /// Every user's use, by UID (root's included: `Status` shows it).
    func uses() -> [UInt32: QuotaUse] {
        var uses: [UInt32: QuotaUse] = [:]
        func add(_ id: RestoreIdentifier, _ bound: QuotaBound, _ amount: Int64) {
            uses[owners[id] ?? 0, default: QuotaUse()][bound] += amount
        }
        for id in identifiers {
            add(id, .identifiers, 1)
            add(id, .storedEvents, outboxes[id]?.limit ?? Int64(RestoreIdentifierRecord.defaultOutboxLimit))
        }
        for intent in intents { add(intent.identifier, .intents, 1) }
        for subscription in subscriptions { add(subscription.identifier, .subscriptions, 1) }
        for (id, record) in published { add(id, .publishedServices, Int64(record.services.count)) }
        for transfer in transfers.values { add(transfer.record.identifier, .transferBytes, Int64(transfer.record.data.count)) }
        return uses
    }

    /// One user's use.
    func use(of uid: UInt32) -> QuotaUse {
        uses()[uid] ?? QuotaUse()
    }
}

extension Daemon {
    /// The loop's tables, to count each user's use.
    var quotaLedger: QuotaLedger {
        QuotaLedger(identifiers: core.identifiers, owners: api.owners, intents: core.machines.keys,
                    subscriptions: core.planner.subscriptions, published: peripheralRole.records,
                    transfers: writeStreams.transfers.running, outboxes: api.outboxes)
    }

    /// What `request` would add to its caller's use; only calls on the
    /// caller's own identifiers count (any other is answered as a missing
    /// identifier by the call itself, before anything is added).
    func quotaAdding(_ request: APIRequest, caller: APICaller) -> QuotaUse {
        func own(_ id: RestoreIdentifier) -> Bool { core.identifiers.contains(id) && api.owners[id] == caller.uid }
        switch request {
        case .register(let id, _, _, let eventLimit):
            if !core.identifiers.contains(id) {
                return QuotaUse([.identifiers: 1, .storedEvents: Int64(eventLimit ?? RestoreIdentifierRecord.defaultOutboxLimit)])
            }
            guard own(id), let limit = eventLimit, let current = api.outboxes[id]?.limit, Int64(limit) > current else { return QuotaUse() }
            return QuotaUse([.storedEvents: Int64(limit) - current])
        case .connect(let id, _, _) where own(id):
            return QuotaUse([.intents: 1])
        case .subscribe(let id, _, _) where own(id):
            return QuotaUse([.subscriptions: 1])
        case .peripheralManager(let id, .addService) where own(id):
            return QuotaUse([.publishedServices: 1])
        case .transfer(let id, .start(_, _, let data, _, _, _)) where own(id):
            return QuotaUse([.transferBytes: Int64(data.count)])
        default:
            return QuotaUse()
        }
    }

    /// Refuses `request` with `QuotaExceeded`, before anything changes, when
    /// it would take its caller past one of their bounds; journalled.
    /// root is bounded only by the disk.
    func checkQuota(_ request: APIRequest, caller: APICaller) throws(RelinkError) {
        guard !caller.isRoot else { return }
        let adding = quotaAdding(request, caller: caller)
        guard !adding.amounts.values.allSatisfy({ $0 == 0 }) else { return }
        let use = quotaLedger.use(of: caller.uid)
        guard let bound = bounds.exceeded(by: adding, use: use, uid: caller.uid) else { return }
        let message = "user \(caller.uid) is at their bound of \(bound): \(use[bound]) of \(bounds[bound]) in use, the call adds \(adding[bound]) (max-\(bound) in relinkd.conf)"
        logger.notice("quota exceeded: \(message)", metadata: .journal([
            .callerUID: "\(caller.uid)", .client: "\(caller.name)", .error: "\(RelinkErrorName.quotaExceeded.rawValue): \(bound)",
        ]))
        throw RelinkError(.quotaExceeded, message)
    }
}
