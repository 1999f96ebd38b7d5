import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import Systemd
import RelinkModel
import RelinkAPI

// Carrying out a machine's actions, in order.
extension Daemon {
    /// Performs actions of `intent`'s machine in order. Store failures are
    /// journalled; the machine's state stays as decided. The list's store
    /// writes are one commit and its StartNotify calls run concurrently with
    /// it, all done before this returns (``RestoreBatch``).
    func perform(_ actions: [Machine.Action], for intent: ConnectionIntentID) async {
        beginBatch()
        for action in actions {
            do {
                try await perform(action, for: intent)
            } catch {
                logger.error("cannot carry out \(action)", metadata: .journal([
                    .restoreID: "\(intent.identifier)", .peripheral: "\(intent.peripheral)", .error: "\(error)",
                ]))
            }
        }
        endBatch()
    }

    private func perform(_ action: Machine.Action, for intent: ConnectionIntentID) async throws(RelinkError) {
        switch action {
        case .lookUpKnownDevice(let address):
            let found = await bluez.mirror.device(address: address.string, adapter: adapterPath) != nil
            loop.immediate.append((intent, .knownDeviceLookup(found: found)))
        case .lookUpConnected(let services):
            loop.immediate.append((intent, .connectedLookup(await connectedCandidates(offering: services))))
        case .startScan(let scan):
            await apply(core.scans.register(scan, for: .connection(intent)))
        case .stopScan:
            await apply(core.scans.unregister(.connection(intent)))
        case .connect(let address):
            await connect(address, for: intent)
        case .disconnect(let address):
            guard let device = await bluez.mirror.device(address: address.string, adapter: adapterPath) else { return }
            let bluez = self.bluez, logger = self.logger
            loop.spawned.append {
                do { try await bluez.disconnect(device.path) } catch {
                    logger.notice("Disconnect failed", metadata: .journal([.address: "\(address.string)", .error: "\(error)"]))
                    return []
                }
                // BlueZ turns a device's auto-connect off at Disconnect()
                // (unless it is Trusted): a device still held that way
                // (a timed-out Connect cancelled) needs it on again.
                return [.renewAutoConnect(address)]
            }
        case .scheduleTimer(let token, let instant):
            // One queue, one sleeping task until its earliest (Daemon+Timers.swift).
            core.timers.schedule(intent, token, at: instant)
        case .cancelTimer(let token):
            core.timers.cancel(intent, token)
        case .armSubscriptions:
            await run(core.planner.linkUp(intent.peripheral))
            writes.batch.released.append(intent.peripheral)
        case .tellSharers(let link, let failure):
            guard core.registry.owner(of: intent.peripheral) == intent else { return }
            for sharer in core.registry.sharers(of: intent.peripheral) {
                loop.immediate.append((sharer, .ownerLink(link, failure: failure)))
            }
        case .useBackgroundAutoConnect(let address):
            // Applied once at the end of the input (``flushAutoConnect()``):
            // several intents may ask in one input (a power cycle), and each
            // registration is a few bus round trips.
            core.autoConnect.hold(address, services: core.machines[intent]?.options.services ?? [])
        case .stopBackgroundAutoConnect(let address):
            core.autoConnect.release(address)
            // A registration releases every device; otherwise this one.
            if !(await applyAutoConnect(renew: false)) { await releaseFromAutoConnect([address.string]) }
        case .emit(let event):
            try await emit(await withWriteLimits(event), to: [intent.identifier])
        case .persist(let record):
            try await persist(record)
        case .log(let decision):
            log(decision)
        }
    }

    func log(_ decision: Decision) {
        if let failure = decision.failure { health.intentFailures[decision.intent] = (failure, Date()) }
        if case .connected = decision.kind { health.intentFailures[decision.intent] = nil }
        let level: Logger.Level = switch decision.kind {
        case .ignored, .staleTimer: .debug
        case .connectFailed, .failed, .stepTimedOut: .notice
        default: .info
        }
        // A large start-up: progress lines are counted, and said at debug level.
        if level == .info, Self.messageID(for: decision.kind) == nil, loop.quietDecisions != nil {
            loop.quietDecisions?[decision.kind.name, default: 0] += 1
            guard logger.logLevel <= .debug else { return }
            return journal(decision, at: .debug)
        }
        guard logger.logLevel <= level else { return }
        journal(decision, at: level)
    }

    private func journal(_ decision: Decision, at level: Logger.Level) {
        var metadata: Logger.Metadata = [:]
        for (key, value) in decision.journalFields { metadata[key] = .string(value) }
        if let id = Self.messageID(for: decision.kind) { metadata.merge(id.metadata) { _, new in new } }
        logger.log(level: level, "\(decision.description)", metadata: metadata)
    }

    /// The journal MESSAGE_ID of the decisions an operator looks for
    /// (explained in systemd/relink.catalog).
    static func messageID(for kind: Decision.Kind) -> RelinkMessageID? {
        switch kind {
        case .connected: .connected
        case .connectFailed: .connectFailed
        case .disconnected: .disconnected
        case .failed: .reconnectGaveUp
        default: nil
        }
    }

    /// Appends an event to the outbox of each identifier, durably, and
    /// journals it (inside a batch scope: at the scope's commit).
    func emit(_ event: RelinkEvent, to ids: [RestoreIdentifier]) async throws(RelinkError) {
        guard !ids.isEmpty else { return }
        let request = try Self.eventRequest(event, to: ids)
        if writes.batch.isOpen {
            enqueue(request)
            return
        }
        submitGathered()  // gathered writes come first
        try await commitNow(request)
    }

    /// During start-up's restore, whether the store holds this row already
    /// (but for when it was requested, which a restart does not change);
    /// the row is then what the store holds from here on.
    private func isStored(_ row: ConnectionIntent, for intent: ConnectionIntentID) -> Bool {
        guard loop.loadedIntents != nil else { return false }
        defer { loop.loadedIntents?[intent] = row }
        guard var stored = loop.loadedIntents?[intent] else { return false }
        stored.requestedAt = row.requestedAt
        return stored == row
    }

    /// Writes a machine's record (and the peripheral's address when it changed).
    func persist(_ record: ConnectionIntentRecord) async throws(RelinkError) {
        if case .cancelled = record.phase {
            try await commit([.removeConnectionIntent(record.intent.identifier, peripheral: record.intent.peripheral)])
            return
        }
        let row = try StoreMapping.storeIntent(record, bond: known.intentBonds[record.intent] ?? IntentBond())
        var mutations: [StoreMutation] = []
        if !isStored(row, for: record.intent) { mutations.append(.putConnectionIntent(row)) }
        var retired: PeripheralID?
        if let address = record.address, var row = known.peripherals[record.intent.peripheral] {
            let device = try StoreMapping.deviceAddress(address, adapter: adapterName)
            if row.address != device, takeOverAddress(address, for: record.intent.peripheral, retiring: &retired) {
                known.peripheralByAddress[row.address.address.string] = nil
                row.address = device
                known.peripherals[record.intent.peripheral] = row
                known.peripheralByAddress[address.string] = record.intent.peripheral
                mutations.insert(.putPeripheral(row), at: 0)
                if let retired { mutations.insert(.removePeripheral(retired), at: 0) }
            }
        }
        if !mutations.isEmpty { try await commit(mutations) }
        if let retired {
            for uid in api.discoveredBy.keys { api.discoveredBy[uid]?.remove(retired) }
            for uid in api.usedBy.keys { api.usedBy[uid]?.remove(retired) }
            refreshViewers(of: retired)
        }
    }

    /// Whether an intent's peripheral may take `address` (its device's, found
    /// at an address that changed), by the core's ``AddressTakeover``: a
    /// peripheral that only a scan met gives it up and is retired
    /// (`retiring`); one that something wants keeps it (logged).
    func takeOverAddress(_ address: BluetoothAddress, for peripheral: PeripheralID, retiring: inout PeripheralID?) -> Bool {
        let holder = known.peripheralByAddress[address.string]
        let wanted = holder.map { !interestedIdentifiers(in: $0).isEmpty } ?? false
        switch AddressTakeover.decide(claimant: peripheral, holder: holder, holderIsWanted: wanted) {
        case .take:
            return true
        case .keep(let holder):
            logger.error("another peripheral that is wanted has this address; the intent's stored address is kept", metadata: .journal([
                .address: "\(address.string)", .peripheral: "\(peripheral)", .otherPeripheral: "\(holder)",
            ]))
            return false
        case .takeRetiring(let holder):
            logger.info("a peripheral met by a scan is retired: its address is an intent's peripheral's now", metadata: .journal([
                .address: "\(address.string)", .peripheral: "\(peripheral)", .otherPeripheral: "\(holder)",
            ]))
            known.peripherals[holder] = nil
            retiring = holder
            return true
        }
    }

    /// Applies mutations durably. Inside a batch scope (a machine's action
    /// list, start-up) they join the scope's one commit, made before the
    /// scope ends; errors are then journalled there, not thrown.
    /// - Throws: ``RelinkError`` (`unknownIdentifier`, `invalidArguments`, `failed`).
    func commit(_ mutations: [StoreMutation]) async throws(RelinkError) {
        if writes.batch.isOpen {
            enqueue(RestoreBatch.Request(mutations: mutations))
            return
        }
        submitGathered()  // gathered writes come first
        try await commitNow(RestoreBatch.Request(mutations: mutations))
    }

    /// Applies mutations durably, now: after every write handed to the
    /// store before, and returns once this one is committed. Events among
    /// them are numbered and may reach attached clients before the commit
    /// (``EventSequencer``).
    /// - Throws: ``RelinkError`` (`unknownIdentifier`, `invalidArguments`, `failed`).
    func commitNow(_ request: RestoreBatch.Request) async throws(RelinkError) {
        var request = request
        numberEvents(&request.mutations)
        let ticket = submit(request, for: .caller)
        await settleCommits(through: ticket)
        guard let outcome = writes.commitOutcomes.removeValue(forKey: ticket) else {
            throw RelinkError(.storeFailed, "store: the commit's outcome was lost")
        }
        if case .failure(let error) = outcome { throw Self.controlError(error) }
    }

    private func connect(_ address: BluetoothAddress, for intent: ConnectionIntentID) async {
        guard let device = await bluez.mirror.device(address: address.string, adapter: adapterPath) else {
            loop.immediate.append((intent, .connectFailed(ConnectionFailure(.deviceGone, errorName: RelinkErrorName.notFound.rawValue, message: "no Device1 at \(address.string)"))))
            return
        }
        if writes.batch.adoptions != nil, device.connected {
            // Start-up: BlueZ still holds this link and answers at once.
            writes.batch.adoptions?.append(RestoreBatch.Adoption(intent: intent, address: address, device: device.path))
            return
        }
        let bluez = self.bluez
        let timeout = (core.machines[intent]?.options.timeouts.connect ?? .seconds(20)) + .seconds(25)
        loop.spawned.append {
            do {
                try await bluez.connect(device.path, timeout: timeout)
            } catch {
                return [.machine(intent, .connectFailed(FailureMapping.failure(error)))]
            }
            var results: [DaemonInput] = [.machine(intent, .connectSucceeded(address))]
            if await bluez.mirror.device(device.path)?.servicesResolved == true {
                results.append(.machine(intent, .servicesResolved(address)))
            }
            return results
        }
    }

    private func connectedCandidates(offering services: Set<BluetoothUUID>) async -> [ConnectedCandidate] {
        let mirror = await bluez.mirror
        return mirror.connectedDevices.compactMap { device -> ConnectedCandidate? in
            guard device.adapter == adapterPath, let address = Self.address(of: device) else { return nil }
            let offered = device.serviceUUIDs
            guard services.isSubset(of: offered) else { return nil }
            return ConnectedCandidate(address: address, name: device.names.gapName ?? device.name, services: offered)
        }
    }

    /// Carries out a change of the merged discovery filter.
    func apply(_ change: ScanCoordinator.Change?) async {
        guard let change else { return }
        do {
            switch change {
            case .start(let filter), .update(let filter):
                try await bluez.startDiscovery(adapter: adapterPath, filter: Self.bluezFilter(filter))
                logger.info("discovery on", metadata: .journal([.adapter: "\(adapterName)", .scanUUIDs: "\(filter.services.map(\.string).sorted())"]))
            case .stop:
                try await bluez.stopDiscovery(adapter: adapterPath)
                logger.info("discovery off", metadata: .journal([.adapter: "\(adapterName)"]))
            }
        } catch let error as BlueZError where error.isServiceUnavailable {
            // bluetoothd is not on the bus: said once when it left; the BlueZ
            // layer keeps the wish and starts discovery when it is back.
            logger.debug("discovery waits for bluetoothd", metadata: .journal([.adapter: "\(adapterName)", .error: "\(error)"]))
        } catch {
            // startDiscovery keeps the wish and resumes once the adapter is up.
            logger.warning("discovery change failed", metadata: .journal([.adapter: "\(adapterName)", .error: "\(error)"]))
        }
    }

    /// BlueZ's filter for the merged one: every advertisement reported
    /// (`DuplicateData`), and an RSSI threshold only when an intent asked
    /// for a limit.
    ///
    /// relinkd needs repeated reports of devices BlueZ already knows: a
    /// known peripheral coming back in range during a scan changes no
    /// property unless its reports are signalled anew. A filter with
    /// `DuplicateData` makes a filtered discovery (bluetoothd then signals
    /// `RSSI` on every report, not only on changes of 8 dBm or more, and
    /// `ManufacturerData`/`ServiceData` every time). An RSSI threshold did
    /// the same before, but the kernel drops every report whose RSSI is
    /// "not available" (0x7f, as btvirt and some controllers send) while
    /// one is set, so such a peripheral was never found (issue 20 finding 6).
    static func bluezFilter(_ filter: DiscoveryFilter) -> DiscoveryFilter {
        var filter = filter
        filter.duplicateData = true
        return filter
    }

    /// Carries out the subscription planner's commands on the link.
    func run(_ commands: [SubscriptionPlanner.Command]) async {
        for command in commands {
            switch command {
            case .startNotify(let peripheral, let key), .stopNotify(let peripheral, let key):
                let start: Bool = if case .startNotify = command { true } else { false }
                guard let device = await knownDevice(of: peripheral),
                      let characteristic = await bluez.mirror.characteristic(
                        device: device.path, service: key.service.string, characteristic: key.characteristic.string)
                else {
                    if start { queue(core.handle(.characteristicMissing(peripheral, key))) }
                    continue
                }
                if start, writes.batch.isOpen {
                    writes.batch.notifies.append(RestoreBatch.Notify(peripheral: peripheral, key: key, characteristic: characteristic.path))
                    continue
                }
                let issued = writes.batch.held.issue(peripheral)
                do {
                    if !start { writes.batch.held.ended(peripheral, key) }
                    if start { try await bluez.startNotify(characteristic.path) } else { try await bluez.stopNotify(characteristic.path) }
                    if start {
                        writes.batch.held.started(peripheral, key, on: characteristic.path)
                        queue(core.handle(.notifyArmed(peripheral, key)))
                    }
                    var fields = deviceFields(peripheral)
                    fields[JournalField.characteristic.rawValue] = "\(key)"
                    logger.info(start ? "notifications armed" : "notifications stopped", metadata: fields)
                } catch {
                    if start {
                        let failure = FailureMapping.failure(error)
                        let notify = RestoreBatch.Notify(peripheral: peripheral, key: key, characteristic: characteristic.path)
                        if await securityFailure(notify, issued, failure) { continue }  // paired on demand, StartNotify again
                        writes.batch.held.ended(peripheral, key)
                        queue(core.handle(.notifyFailed(peripheral, key, failure)))
                        logger.warning("StartNotify failed", metadata: .journal([
                            .peripheral: "\(peripheral)", .characteristic: "\(key)",
                            .error: "\(failure.errorName)", .errorClass: "\(failure.failureClass.rawValue)",
                        ]))
                    }
                }
            }
        }
    }

    /// A `connected` or `restored` event with its link's largest values per
    /// write type, from the MTU bluetoothd reports now (the state machine
    /// does not know it); other events, and a link whose MTU is unknown, as
    /// they are.
    func withWriteLimits(_ event: RelinkEvent) async -> RelinkEvent {
        switch event {
        case .connected(let p, let address, let route, nil), .restored(let p, let address, let route, nil):
            let mirror = await bluez.mirror
            // Only the device found is built: this runs for every link
            // restored at start-up (building every device each time cost N^2).
            guard let device = mirror.firstDevice(address: { Self.address($0, type: $1) == address }),
                  let limits = mirror.writeLimits(of: device.path) else { return event }
            if case .connected = event { return .connected(peripheral: p, address: address, route: route, limits: limits) }
            return .restored(peripheral: p, address: address, route: route, limits: limits)
        default:
            return event
        }
    }

    /// The core's address of a BlueZ device.
    static func address(of device: Device) -> BluetoothAddress? {
        address(device.address, type: device.addressType)
    }

    /// The core's address for BlueZ's `Address` and `AddressType`.
    static func address(_ text: String?, type: String?) -> BluetoothAddress? {
        guard let text else { return nil }
        return try? BluetoothAddress(parsing: text.uppercased(), kind: type == "random" ? .random : .public)
    }
}
