import Foundation
import RelinkModel
import RelinkStore
import Restoration
import RelinkAPI
import Systemd

/// What `Status` (Manager1 and Control1) reports, as the loop's state was
/// at one input.
///
/// The loop takes it in constant time: every field is a copy-on-write
/// collection or a small value, so taking it copies no intent (the loop
/// pays for one copy of a table only if it changes that table while a
/// snapshot is still being rendered). The document itself is made from the
/// snapshot off the loop (``Daemon/statusJSON(for:)``): its cost, which grows
/// with the identifiers and intents, never holds the loop, the liveness
/// probe or other clients' calls.
struct StatusSnapshot: Sendable {
    var ready: Bool
    var adapter: String
    /// The adapter's state as programs are told of it; nil before start-up read it.
    var adapterStatus: AdapterStatus?
    var discovering: Bool
    var identifiers: Set<RestoreIdentifier>
    var owners: [RestoreIdentifier: UInt32]
    var machines: [ConnectionIntentID: Machine]
    /// Each intent's last failure and its bond (``IntentFacts``).
    var intentFacts: IntentFacts
    var planner: SubscriptionPlanner
    var scanIntents: [RestoreIdentifier: ScanIntent]
    /// The store's side of the document.
    var store: StoreView
    /// Launch specs and where each program's starts are (docs/relaunch.md).
    var relaunch = RelaunchStatus()

    /// What `Status` says of each intent besides its machine.
    struct IntentFacts: Sendable {
        /// The last failure of each intent that failed, and when.
        var failures: [ConnectionIntentID: (failure: ConnectionFailure, at: Date)]
        /// Each intent's bond as stored (store v11).
        var bonds: [ConnectionIntentID: IntentBond]
    }

    /// What `Status` says of the store as a whole, for every caller.
    struct StoreView: Sendable {
        /// The databases moved aside when relinkd started.
        var quarantined: [QuarantinedFile]
        /// Stored rows that no longer decode, kept aside in the file.
        var unreadableRows: [UnreadableRow]
        /// Whether the store takes writes (``UnstoredEvents/Health``).
        var health: UnstoredEvents.Health
        /// What each user keeps, against their bounds (shown to root only).
        var quotas: (ledger: QuotaLedger, bounds: UserBounds)?
    }

    /// The document for `caller`: the identifiers it may see (all of them
    /// for root), and the store-wide entries.
    func json(for caller: APICaller, inbox: DaemonInbox.Depth? = nil) -> String {
        json(showingQuotas: caller.isRoot, inbox: inbox) { caller.mayUse(ownedBy: owners[$0] ?? 0) }
    }

    /// The document as JSON: the identifiers `visible` lets through, with
    /// their intents and links. One pass over the intents and one over the
    /// subscriptions, then a sort per identifier: O(n log n) in their
    /// numbers, never one pass per identifier.
    /// `showingQuotas`: each user's use against their bounds (root's view).
    /// `inbox`: the loop's queue as it was when the document was made.
    func json(showingQuotas: Bool = true, inbox: DaemonInbox.Depth? = nil, visible: (RestoreIdentifier) -> Bool = { _ in true }) -> String {
        document(showingQuotas: showingQuotas, inbox: inbox, visible: visible).json()
    }

    /// The document itself (see ``json(showingQuotas:inbox:visible:)``).
    func document(showingQuotas: Bool = true, inbox: DaemonInbox.Depth? = nil, visible: (RestoreIdentifier) -> Bool = { _ in true }) -> StatusDocument {
        var intentsByIdentifier: [RestoreIdentifier: [ConnectionIntentID]] = [:]
        for intent in machines.keys { intentsByIdentifier[intent.identifier, default: []].append(intent) }
        var subscriptionCounts: [RestoreIdentifier: Int] = [:]
        for subscription in planner.subscriptions { subscriptionCounts[subscription.identifier, default: 0] += 1 }
        var ids: [StatusDocument.Identifier] = []
        for id in identifiers.sorted() where visible(id) {
            var connections: [StatusDocument.Connection] = []
            for intent in (intentsByIdentifier[id] ?? []).sorted() {
                guard let machine = machines[intent] else { continue }
                let bond = intentFacts.bonds[intent] ?? IntentBond()
                var entry = StatusDocument.Connection(peripheral: intent.peripheral.description, state: Daemon.stateName(machine.state),
                                                      address: machine.knownAddress?.string, attempt: machine.attempt,
                                                      bonded: bond.bonded, identityAddress: bond.identityAddress)
                if machine.state.isLinkUp {
                    // Subscribed characteristics the link does not carry yet
                    // (waiting for them to appear, or rediscovering).
                    let unarmed = planner.unarmed(of: intent.peripheral, for: id)
                    if !unarmed.isEmpty { entry.unarmed = unarmed.map(\.description) }
                }
                if let last = intentFacts.failures[intent] {
                    entry.lastError = last.failure.description
                    entry.lastErrorAtMs = last.at.unixMilliseconds
                }
                connections.append(entry)
            }
            ids.append(StatusDocument.Identifier(id: id.rawValue, connections: connections, subscriptions: subscriptionCounts[id] ?? 0,
                                                 scanning: scanIntents[id] != nil, launch: relaunch.entry(id)))
        }
        let adapterStatus = adapterStatus ?? AdapterStatus(.bluetoothdMissing)
        return StatusDocument(
            ready: ready, adapter: adapter, discovering: discovering,
            adapterState: adapterStatus.state.rawValue, adapterRoles: adapterStatus.roles.map(\.rawValue),
            identifiers: ids, quarantined: Self.quarantineEntries(store.quarantined), store: store.health.entry,
            unreadableRows: store.unreadableRows.filter { row in
                (try? RestoreIdentifier(row.identifier ?? "")).map(visible) ?? true
            }.map { StatusDocument.UnreadableRow(table: $0.table, identifier: $0.identifier ?? "", reason: $0.reason) },
            quotas: showingQuotas ? store.quotas.map { Self.quotaEntry($0.ledger, $0.bounds) } : nil,
            inbox: inbox.map { StatusDocument.Inbox(queued: $0.queued, highWater: $0.highWater) })
    }

    /// `quotas`: the bounds of every user but root, and each user's use
    /// (root's too, unbounded: `bounded` false), by UID.
    static func quotaEntry(_ ledger: QuotaLedger, _ bounds: UserBounds) -> StatusDocument.Quotas {
        let limits = Dictionary(uniqueKeysWithValues: QuotaBound.allCases.map { ($0.jsonKey, bounds[$0]) })
        let users = ledger.uses().sorted { $0.key < $1.key }.map { uid, use in
            StatusDocument.Quotas.User(uid: uid, bounded: uid != 0,
                                       use: Dictionary(uniqueKeysWithValues: QuotaBound.allCases.map { ($0.jsonKey, use[$0]) }))
        }
        return StatusDocument.Quotas(bounds: limits, users: users)
    }

    /// The databases the store moved aside when relinkd started (it then
    /// started EMPTY), for every caller: the whole store is concerned, not
    /// one identifier. Empty on a usual start.
    static func quarantineEntries(_ files: [QuarantinedFile]) -> [StatusDocument.QuarantinedStore] {
        files.map { file in
            StatusDocument.QuarantinedStore(path: file.originalPath, movedTo: file.quarantinedPath, reason: file.reason.tag,
                                            message: file.reason.description, atMs: file.quarantinedAt.unixMilliseconds)
        }
    }
}

// Status for both APIs (Manager1.Status, Discovering; Control1.Status) and
// the watchdog's liveness probe.
extension Daemon {
    /// What `Status` shows, as the loop's state is now: constant time
    /// (``StatusSnapshot``).
    var currentStatus: StatusSnapshot {
        StatusSnapshot(ready: isReady, adapter: adapterName, adapterStatus: core.adapter.current,
                       discovering: core.scans.isScanning, identifiers: core.identifiers,
                       owners: api.owners, machines: core.machines, intentFacts: StatusSnapshot.IntentFacts(failures: health.intentFailures, bonds: known.intentBonds), planner: core.planner,
                       scanIntents: core.scanIntents,
                       store: .init(quarantined: store.quarantined, unreadableRows: health.unreadableRows,
                                    health: writes.unstored.health, quotas: (quotaLedger, bounds)),
                       relaunch: RelaunchStatus(state: core.relaunch, now: clock.now))
    }

    /// Asks the loop for a ``StatusSnapshot``. It is answered as the next
    /// input in turn, without waiting for the store, in constant time;
    /// nil at once when the asking task is cancelled, and when relinkd is
    /// stopping.
    nonisolated func statusSnapshot() async -> StatusSnapshot? {
        await LoopAnswer<StatusSnapshot>().wait { answer in
            if case .terminated = inputContinuation.yield(.status(answer)) { return false }
            return true
        }
    }

    /// `Status` as JSON: every identifier (`caller` nil: Control1), or
    /// those `caller` may see. The loop only hands over a snapshot; the
    /// document is made on the global concurrent executor, never on the
    /// loop's thread (the bus connection's I/O thread), however large.
    /// - Throws: `Failed` when relinkd is stopping.
    nonisolated func statusJSON(for caller: APICaller? = nil) async throws(RelinkError) -> String {
        try await statusJSON { snapshot, inbox in caller.map { snapshot.json(for: $0, inbox: inbox) } ?? snapshot.json(inbox: inbox) }
    }

    /// `Status` as JSON with the identifiers `visible` lets through (see
    /// ``statusJSON(for:)``); `visible` runs off the loop.
    /// - Throws: `Failed` when relinkd is stopping.
    nonisolated func statusJSON(visible: @escaping @Sendable (RestoreIdentifier) -> Bool) async throws(RelinkError) -> String {
        try await statusJSON { snapshot, inbox in snapshot.json(inbox: inbox, visible: visible) }
    }

    /// The watchdog's liveness probe: the loop answers a status snapshot
    /// request (constant time, whatever the size of the state), so the
    /// probe fails only when the loop does not take its inputs. It returns
    /// false at once when cancelled, as ``Systemd/LivenessProbe`` asks: the
    /// watchdog cancels it at its period and at shutdown, also while the
    /// loop has not started (start-up) or is busy.
    nonisolated var livenessProbe: any LivenessProbe {
        ClosureLivenessProbe { [self] in await statusSnapshot() != nil }
    }

    private nonisolated func statusJSON(_ render: @escaping @Sendable (StatusSnapshot, DaemonInbox.Depth) -> String) async throws(RelinkError) -> String {
        guard let snapshot = await statusSnapshot() else { throw RelinkError(.failed, "relinkd is stopping") }
        let inbox = inputContinuation.depth
        return await withTaskExecutorPreference(globalConcurrentExecutor) { render(snapshot, inbox) }
    }
}
