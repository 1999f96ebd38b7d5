import Foundation
import Logging
import RelinkStore
import Restoration
import Systemd
import RelinkModel
import RelinkAPI

// Start-up: rebuild every identifier from the store and resume it, with no
// client present.
extension Daemon {
    /// Loads the store and resumes every scan, pending connection and
    /// subscription (``StartupPlan``). A link BlueZ still holds is adopted
    /// by the known-identifier strategy (its connect step succeeds at once,
    /// without a call: ``adopt(_:)``) and reported `restored`.
    ///
    /// Concurrent, not link after link: every machine is started first; the
    /// adoptions are then made together and their results fed to
    /// the machines in order, all the store writes (pending, restored,
    /// connected) are one commit, made before this returns, so before any
    /// client is answered, and every StartNotify is issued together as the
    /// loop starts (its outcome comes back as an input).
    /// - Throws: `Failed` when the store cannot be read.
    func startUp() async throws(RelinkError) {
        let stored: StoredState
        do { stored = try await store.loadState() } catch { throw RelinkError(.failed, "cannot load the store: \(error)") }
        health.unreadableRows = stored.unreadable
        for row in stored.unreadable {
            logger.error("a stored \(row.table) row of \(row.identifier ?? "?") could not be read: kept in the store, not loaded", metadata: .journal([
                .restoreID: "\(row.identifier ?? "")", .error: "\(row.reason)", .decision: "row-kept-aside",
            ]))
        }
        beginBatch()
        writes.batch.adoptions = []
        for row in stored.peripherals {
            known.peripherals[row.id] = row
            known.peripheralByAddress[row.address.address.string] = row.id
        }
        queue(core.handle(.gattDatabasesLoaded(stored.gattDatabases)))
        await learnStoredNames()
        defer { peripheralRoleLoaded(stored.peripheralManagers) }
        var states: [IdentifierState] = []
        var loaded: [ConnectionIntentID: ConnectionIntent] = [:]
        var registrations: [RestoreIdentifier: ConnectionEventRegistration] = [:]
        for entry in stored.identifiers {
            let id = entry.record.id
            core.identifiers.insert(id)
            registrations[id] = entry.connectionEvents
            apiLoaded(id, entry)
            core.namePreferences[id] = entry.record.namePreference == .advertising ? .advertisingName : .gapName
            var state = IdentifierState(identifier: id, namePreference: core.namePreferences[id] ?? .gapName)
            if let scan = entry.scan {
                state.scan = scan
                core.scanIntents[id] = state.scan
            }
            for row in entry.connections {
                do {
                    state.connections.append(try StoreMapping.coreRecord(row, peripheral: known.peripherals[row.peripheral]))
                    let intent = ConnectionIntentID(identifier: id, peripheral: row.peripheral)
                    loaded[intent] = row
                    if row.bond != IntentBond() { known.intentBonds[intent] = row.bond }
                } catch {
                    // Kept in the store as it is, not resumed, and said so.
                    health.unreadableRows.append(UnreadableRow(table: "connection_intent", identifier: id.rawValue, reason: "\(error)"))
                    logger.error("a stored connection_intent row of \(id) is not valid: kept in the store, not resumed", metadata: .journal([
                        .restoreID: "\(id)", .peripheral: "\(row.peripheral)", .error: "\(error)", .decision: "row-kept-aside",
                    ]))
                }
            }
            state.subscriptions = Set(entry.subscriptions)
            states.append(state)
        }
        // SIGTERM while the store was read: stop before talking to
        // bluetoothd (each scan below is a call to it, 1,000 scans about
        // 50 ms; issue 37's start-up SIGTERM campaign).
        if Task.isCancelled { return }
        // Before any `restored` or `connected`: what a program reads first
        // after the outbox's older events is the adapter's state now.
        await startWatchingAdapter(lastAnnounced: stored.adapterStates[adapterName])
        // Then what the connection-event registrations were told and is
        // no longer so: links that ended or came up while relinkd was stopped.
        let told = registrations.values.reduce(into: Set<PeripheralID>()) { $0.formUnion($1.told) }
        core.connectionEvents.load(registrations, addresses: Dictionary(uniqueKeysWithValues: told.compactMap { peripheral in
            known.peripherals[peripheral].map { (peripheral, $0.address.address) }
        }))
        // Its peripherals stay the identifier's to name, as when it registered.
        for (id, registration) in registrations {
            for peripheral in registration.told.union(registration.peripherals) { discovered(peripheral, by: id) }
        }
        await peersNow(atStart: true)
        let plan = StartupPlan(states: states, registry: &core.registry)
        core.planner.resetAll()
        for subscription in plan.subscriptions {
            _ = core.planner.subscribe(subscription)
            // Made before this start: whether it was ever armed is not
            // known, so a missing service does not drop it (``GattGrace``).
            core.gattGrace.confirm(subscription.peripheral, subscription.characteristic)
        }
        // In the order of the clients' descriptions, each made once (not
        // twice per comparison: reflection, 2.6% of a 10,000-intent start-up).
        let scans = plan.scans.map { (order: "\($0.key)", client: $0.key, scan: $0.value) }.sorted { $0.order < $1.order }
        for (_, client, scan) in scans {
            if Task.isCancelled { return }
            await apply(core.scans.register(scan, for: client))
        }
        for record in plan.obsolete {
            try? await commit([.removeConnectionIntent(record.intent.identifier, peripheral: record.intent.peripheral)])
        }
        if plan.resume.count > Self.quietStartupIntents { loop.quietDecisions = [:] }
        loop.loadedIntents = loaded
        defer { loop.loadedIntents = nil }
        for resume in plan.resume {
            // SIGTERM during start-up: stop here (``run(holdingStartUp:whenRestored:onReady:)``
            // checks too). Nothing of the batch is committed; the store
            // stays as it was, to be resumed at the next start.
            if Task.isCancelled { return }
            var machine = Machine(record: resume.record, clock: clock)
            let actions: [Machine.Action]
            switch resume.claim {
            case .owner: actions = machine.start(restoringConnected: resume.restoringConnected)
            case .sharing(let owner):
                actions = machine.claimedByOtherIntent(owner: owner, restoringConnected: resume.restoringConnected)
            }
            core.machines[resume.record.intent] = machine
            await perform(actions, for: resume.record.intent)
            await drainImmediate()
        }
        summariseQuietDecisions(intents: plan.resume.count)
        let adoptions = writes.batch.adoptions ?? []
        writes.batch.adoptions = nil
        await adopt(adoptions)
        endBatch()
        await flushCommits()  // stored before any client is answered
        await readResolvedDatabases()  // links BlueZ kept: no ServicesResolved change will come
        await seedBonds()
        await transfersLoaded(stored.transfers)
        logger.notice("restored from the store: \(statusSummary)", metadata: RelinkMessageID.restored.metadata.merging(.journal([
            .identifiers: "\(core.identifiers.count)", .intents: "\(plan.resume.count)",
            .subscriptions: "\(plan.subscriptions.count)", .scans: "\(plan.scans.count)",
        ])) { $1 })
    }
}

extension Daemon {
    /// Above this many intents to restore, start-up journals each intent's
    /// first steps (`started`, `round-started`, `strategy-started`,
    /// `known-device-missing`, `no-candidate`, ...: about 7 lines an intent)
    /// at debug level and one info line that counts them. At 10,000 intents
    /// those lines were a third of start-up's CPU, and journald's default
    /// rate limit (10,000 entries in 30 s) dropped most of them anyway, at
    /// random. Failures, connections and every later step are journalled as
    /// always.
    static let quietStartupIntents = 100

    /// Ends a quiet start-up's count (``quietStartupIntents``) with one line.
    func summariseQuietDecisions(intents: Int) {
        guard let counts = loop.quietDecisions else { return }
        loop.quietDecisions = nil
        let text = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        logger.info("the first steps of \(intents) restored intents are journalled at debug level: \(text)", metadata: .journal([
            .decision: "startup-steps-summarised", .intents: "\(intents)",
        ]))
    }

    /// How long an adopting Connect may take: BlueZ answers at once for a
    /// connected device; a link that drops meanwhile fails the step, and
    /// the machine goes on with its next one.
    static let adoptionTimeout: Duration = .seconds(5)

    /// Adopts the links BlueZ still holds, then feeds each result to its
    /// machine, in the order the machines asked. A device the mirror shows
    /// connected needs no call: BlueZ's `Connect()` on a connected LE
    /// device replies at once and changes nothing (`dev_connect` in
    /// src/device.c), so it would only cost a bus round trip per link. One
    /// that dropped since the machines started gets a real `Connect`,
    /// issued concurrently with the others.
    func adopt(_ adoptions: [RestoreBatch.Adoption]) async {
        guard !adoptions.isEmpty else { return }
        let bluez = self.bluez
        var results = [[Machine.Input]](repeating: [], count: adoptions.count)
        await withTaskGroup(of: (Int, [Machine.Input]).self) { group in
            for (index, adoption) in adoptions.enumerated() {
                if let device = await bluez.mirror.device(adoption.device), device.connected {
                    results[index] = [.connectSucceeded(adoption.address)]
                        + (device.servicesResolved ? [.servicesResolved(adoption.address)] : [])
                    continue
                }
                group.addTask {
                    do {
                        try await bluez.connect(adoption.device, timeout: Self.adoptionTimeout)
                    } catch {
                        return (index, [.connectFailed(FailureMapping.failure(error))])
                    }
                    var inputs: [Machine.Input] = [.connectSucceeded(adoption.address)]
                    if await bluez.mirror.device(adoption.device)?.servicesResolved == true {
                        inputs.append(.servicesResolved(adoption.address))
                    }
                    return (index, inputs)
                }
            }
            for await (index, inputs) in group { results[index] = inputs }
        }
        for (adoption, inputs) in zip(adoptions, results) {
            for input in inputs { await feed(adoption.intent, input) }
            await drainImmediate()
        }
    }
}
