import DBus
import Foundation
import RelinkAPI
import Logging
import RelinkStore
import Restoration
import RelinkModel

// The client API's calls, handled by the daemon's loop in order, on the
// same operations as Control1 (Core/Daemon+Operations.swift).
extension Daemon {
    /// Sends an API request to the loop and waits for its reply; `queued`
    /// runs as soon as the request is in the loop's inbox (the D-Bus
    /// handler ends its caller's turn there: ``DBus/MethodCall/endTurn()``).
    nonisolated func submit(_ request: APIRequest, from caller: APICaller, queued: (@Sendable () -> Void)? = nil) async -> APIReply {
        await withCheckedContinuation { reply in
            if case .terminated = inputContinuation.yield(.api(request, caller, reply)) {
                reply.resume(returning: .failure(RelinkError(.failed, "relinkd is stopping")))
            }
            queued?()
        }
    }

    /// After a `Register`/`Watch` reply: start sending events.
    nonisolated func requestDelivery(_ id: RestoreIdentifier, to client: String, after: Int64) {
        inputContinuation.yield(.startDelivery(id, client: client, after: after))
    }

    /// A unique name left the bus.
    nonisolated func noteClientLeft(_ name: String) {
        inputContinuation.yield(.clientLeft(name))
    }

    func handleAPI(_ request: APIRequest, from caller: APICaller) async -> APIReply {
        do {
            return .success(try await api(request, from: caller))
        } catch {
            logAPIRefusal(error, from: caller)
            return .failure(error)
        }
    }

    func logAPIRefusal(_ error: RelinkError, from caller: APICaller) {
        logger.info("API call refused", metadata: .journal([
            .error: "\(error.name)", .errorMessage: "\(error.message)", .callerUID: "\(caller.uid)",
        ]))
    }

    /// `Ack`, without holding the loop for its commit: the acknowledgement
    /// goes to the store behind every write handed to it before (so behind
    /// the events it acknowledges), and the reply goes out once it is
    /// committed (``drainCommits()``). A client acknowledges every event;
    /// a value notified meanwhile must not wait for that fsync.
    func acknowledge(_ id: RestoreIdentifier, through: Int64, from caller: APICaller, reply: CheckedContinuation<APIReply, Never>) {
        let mutation: StoreMutation
        do throws(RelinkError) {
            let id = try visible(id, to: caller)
            try checkAcknowledgement(id, through: through)
            mutation = .acknowledgeEvents(id, through: through)
        } catch {
            logAPIRefusal(error, from: caller)
            reply.resume(returning: .failure(error))
            return
        }
        submitGathered()
        submit(RestoreBatch.Request(mutations: [mutation]), for: .acknowledgement(caller, reply))
    }

    /// Refuses (`InvalidArguments`) an Ack through a number relinkd never
    /// handed out to `id`: its sequencer's next number bounds it, which
    /// also counts the events a full disk kept out of the store (a client
    /// may acknowledge those; the store then moves its next number above them).
    func checkAcknowledgement(_ id: RestoreIdentifier, through: Int64) throws(RelinkError) {
        let next = api.sequencers[id]?.next ?? api.outboxes[id]?.nextStored ?? 1
        guard through >= 0, through < next else {
            throw RelinkError(.invalidArguments, "acknowledgement through \(through) for \(id), but the next sequence number is \(next)")
        }
    }

    /// The identifier, when the caller may see it; else `unknownIdentifier`
    /// (another user's identifier looks exactly like a missing one).
    func visible(_ id: RestoreIdentifier, to caller: APICaller) throws(RelinkError) -> RestoreIdentifier {
        guard core.identifiers.contains(id), caller.mayUse(ownedBy: api.owners[id] ?? 0) else {
            throw .unknownIdentifier(named: id.rawValue)
        }
        return id
    }

    private func api(_ request: APIRequest, from caller: APICaller) async throws(RelinkError) -> APIResult {
        try checkQuota(request, caller: caller)
        switch request {
        case .register(let id, let rule, let replay, let eventLimit):
            return try await register(id, rule: rule, replay: replay, eventLimit: eventLimit, caller: caller)
        case .unregister(let id):
            try await unregister(try visible(id, to: caller))
            return APIResult()
        case .listIdentifiers:
            let items = core.identifiers.sorted().filter { caller.mayUse(ownedBy: api.owners[$0] ?? 0) }.map { id in
                DBusValue.structure([.string(id.rawValue), .objectPath(APIPath.central(id))])
            }
            return APIResult(values: [.array(.structure([.string, .objectPath]), items)])
        case .scan(let id, let scan):
            try await setScan(try visible(id, to: caller), scan)
            return APIResult()
        case .stopScan(let id):
            try await stopScan(try visible(id, to: caller))
            return APIResult()
        case .connect(let id, let ref, let options):
            let id = try visible(id, to: caller)
            let address = try address(of: ref)
            let peripheral = try await addConnection(id, address: address, options: options)
            return APIResult(values: [.objectPath(APIPath.peripheral(peripheral))])
        case .cancel(let id, let ref):
            let id = try visible(id, to: caller)
            let peripheral = try knownPeripheral(ref)
            let subscriptions = core.planner.subscriptions.filter { $0.identifier == id && $0.peripheral == peripheral }
            let hasIntent = core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] != nil
            guard hasIntent || !subscriptions.isEmpty else {
                throw RelinkError(.unknownPeripheral, "\(id) has no connection intent or subscription for \(ref)")
            }
            // One transaction: a Cancel the store refuses changes nothing.
            let removed = subscriptions.sorted(by: { $0.characteristic < $1.characteristic })
            var mutations: [StoreMutation] = removed.map { .removeSubscription($0) }
            if hasIntent { mutations.append(.removeConnectionIntent(id, peripheral: peripheral)) }
            try await commit(mutations)
            for subscription in removed { await unsubscribed(subscription) }
            await connectionCancelled(id, peripheral: peripheral)
            return APIResult()
        case .subscribe(let id, let ref, let key):
            let id = try visible(id, to: caller)
            try await addSubscription(Subscription(identifier: id, peripheral: try knownPeripheral(ref), characteristic: key))
            return APIResult()
        case .unsubscribe(let id, let ref, let key):
            let id = try visible(id, to: caller)
            let subscription = Subscription(identifier: id, peripheral: try knownPeripheral(ref), characteristic: key)
            guard core.planner.contains(subscription) else {
                throw RelinkError(.unknownPeripheral, "\(id) is not subscribed to \(key) on \(ref)")
            }
            try await removeSubscription(subscription)
            return APIResult()
        case .locate(let id, let ref, let key):
            _ = try visible(id, to: caller)
            return APIResult(characteristic: try await locate(ref, key))
        case .retrievePeripherals(let id, let refs):
            return await retrievePeripherals(try visible(id, to: caller), refs, for: caller)
        case .retrieveConnectedPeripherals(let id, let services):
            return try await retrieveConnectedPeripherals(try visible(id, to: caller), services)
        case .registerForConnectionEvents(let id, let services, let refs):
            return try await registerForConnectionEvents(try visible(id, to: caller), services: services, peripherals: refs, for: caller)
        case .unregisterForConnectionEvents(let id):
            return try await unregisterForConnectionEvents(try visible(id, to: caller))
        case .gattDatabase(let id, let ref):
            let database = try await liveGattDatabase(try visible(id, to: caller), ref)
            return APIResult(values: [.string(database.json)])
        case .locateDescriptor(let id, let ref, let key, let forWriting):
            _ = try visible(id, to: caller)
            return APIResult(characteristic: try await locateDescriptor(ref, key, forWriting: forWriting))
        case .events(let id, let after, let max):
            let events = try await storedEvents(try visible(id, to: caller), after: after, limit: max)
            return APIResult(values: [Self.eventArray(events)])
        case .ack:
            // The loop answers `Ack` itself, without waiting for its commit
            // (``handle(_:)``, ``acknowledge(_:through:from:reply:)``).
            preconditionFailure("Ack reached the waiting API path")
        case .watch(let id, let after):
            let id = try visible(id, to: caller)
            try attach(caller, to: id)
            return APIResult(delivery: (id, after))
        case .unwatch(let id):
            let id = try visible(id, to: caller)
            api.attachments[id]?[caller.name] = nil
            return APIResult()
        case .peripheralManager(let id, let request):
            return try await peripheralManager(try visible(id, to: caller), request)
        case .setLaunch(let id, let spec):
            try await setLaunch(try visible(id, to: caller), spec)
            return APIResult()
        case .transfer(let id, let request):
            return try await transferCall(try visible(id, to: caller), request)
        case .pairTarget(let id, let ref):
            let id = try visible(id, to: caller)
            try checkPairingAccess(ref, for: caller)
            return try await pairTarget(id, ref)
        case .unpairTarget(let id, let ref):
            let id = try visible(id, to: caller)
            try checkPairingAccess(ref, for: caller)
            return try await unpairTarget(id, ref)
        case .answerPairing(let id, let number, let accept, let passkey):
            return try await answerPairing(try visible(id, to: caller), number, accept: accept, passkey: passkey)
        }
    }

    private func register(_ id: RestoreIdentifier, rule: NamePreference?, replay: Bool, eventLimit: Int?,
                          caller: APICaller) async throws(RelinkError) -> APIResult {
        let created: Bool
        if core.identifiers.contains(id) {
            let owner = api.owners[id] ?? 0
            guard caller.mayUse(ownedBy: owner) else {
                throw RelinkError(.notPermitted, "restore identifier \(id) is taken: choose another name")
            }
            let currentLimit = Int(api.outboxes[id]?.limit ?? Int64(RestoreIdentifierRecord.defaultOutboxLimit))
            if (rule != nil && rule != core.namePreferences[id]) || (eventLimit != nil && eventLimit != currentLimit) {
                try await updateIdentifier(id, rule: rule ?? core.namePreferences[id] ?? .gapName, eventLimit: eventLimit ?? currentLimit, owner: owner)
            }
            created = false
        } else {
            try await createIdentifier(id, owner: caller.uid, namePreference: rule, eventLimit: eventLimit, caller: caller.name)
            created = true
        }
        try attach(caller, to: id)
        let cursor = api.outboxes[id] ?? OutboxCursor(limit: RestoreIdentifierRecord.defaultOutboxLimit)
        let restored = await restoredState(id, new: created, cursor: cursor, launchReason: launchReason(registering: id))
        logger.info("client registered", metadata: .journal([
            .restoreID: "\(id)", .client: "\(caller.name)", .callerUID: "\(caller.uid)", .new: "\(created)",
        ]))
        return APIResult(values: [.objectPath(APIPath.central(id)), restored],
                         delivery: (id, replay ? cursor.acknowledged : cursor.lastSequence))
    }

    /// Changes an identifier's name rule or event bound, durably. A lower
    /// bound drops the oldest unacknowledged events at once (counted as
    /// dropped, as the bound always does).
    private func updateIdentifier(_ id: RestoreIdentifier, rule: NamePreference, eventLimit: Int, owner: UInt32) async throws(RelinkError) {
        do {
            let record = try RestoreIdentifierRecord(id: id, ownerUID: owner,
                                                     namePreference: rule == .advertisingName ? .advertising : .gap,
                                                     outboxLimit: eventLimit, createdAt: Date())
            try await commit([.putIdentifier(record)])
        } catch let e as RelinkError {
            throw e
        } catch { throw RelinkError(.invalidArguments, "\(error)") }
        core.namePreferences[id] = rule
        api.outboxes[id]?.limit = Int64(eventLimit)
        centralChanged(id)
        logger.info("identifier changed", metadata: .journal([
            .restoreID: "\(id)", .nameRule: "\(rule)", .eventLimit: "\(eventLimit)",
        ]))
    }

    /// Attaches a client (not live until its reply is out).
    private func attach(_ caller: APICaller, to id: RestoreIdentifier) throws(RelinkError) {
        guard !api.recentlyLeft.contains(caller.name) else { throw RelinkError(.failed, "the caller left the bus") }
        api.attachments[id, default: [:]][caller.name] = Attachment(uid: caller.uid, live: false, cursor: 0)
    }

    /// Forgets an identifier: its scan, intents, subscriptions, outbox and object.
    private func unregister(_ id: RestoreIdentifier) async throws(RelinkError) {
        let storeID = id
        try await commit([.removeIdentifier(storeID)])
        if core.scanIntents.removeValue(forKey: id) != nil { await apply(core.scans.unregister(.identifier(id))) }
        let touched = Set(core.planner.subscriptions.filter { $0.identifier == id }.map(\.peripheral))
            .union(core.machines.keys.filter { $0.identifier == id }.map(\.peripheral))
        await run(core.planner.removeAll(of: id))
        for intent in core.machines.keys.filter({ $0.identifier == id }).sorted() {
            guard var machine = core.machines[intent] else { continue }
            let actions = machine.cancel(linkSharedWithOthers: core.registry.isShared(beyond: intent))
            core.machines[intent] = nil
            known.intentBonds[intent] = nil
            // The rows and the outbox are gone with the identifier.
            await perform(actions.filter {
                switch $0 {
                case .persist, .emit: false
                default: true
                }
            }, for: intent)
            if let newOwner = core.registry.release(intent) { loop.immediate.append((newOwner, .ownershipGranted)) }
        }
        await peripheralRoleUnregistered(id)
        relaunchForget(id)
        transfersUnregistered(id)
        core.identifiers.remove(id)
        core.namePreferences[id] = nil
        queue(core.handle(.connectionEventsStored(id, nil, connectedNow: [])))
        let audience = audience(ofOwner: api.owners[id] ?? 0)
        api.attachments[id] = nil
        api.outboxes[id] = nil
        api.sequencers[id] = nil
        publisher?.removeCentral(id, announceTo: audience)
        api.outboxSignals.remove(id)
        api.owners[id] = nil
        for peripheral in touched { refreshViewers(of: peripheral) }
        logger.info("identifier unregistered", metadata: .journal([.restoreID: "\(id)"]))
    }

    /// The address of a peripheral reference.
    private func address(of ref: PeripheralRef) throws(RelinkError) -> BluetoothAddress {
        switch ref {
        case .address(let address): return address
        case .id(let id):
            guard let row = known.peripherals[id] else { throw RelinkError(.unknownPeripheral, "relinkd knows no peripheral \(id)") }
            return row.address.address
        }
    }

    /// The known peripheral a reference names.
    func knownPeripheral(_ ref: PeripheralRef) throws(RelinkError) -> PeripheralID {
        switch ref {
        case .address(let address):
            guard let id = peripheralID(for: address) else { throw Self.unknownPeripheral(ref) }
            return id
        case .id(let id):
            guard known.peripherals[id] != nil else { throw Self.unknownPeripheral(ref) }
            return id
        }
    }

    /// The reply for a peripheral relinkd does not know (also for one the
    /// caller may not name: it looks exactly the same).
    static func unknownPeripheral(_ ref: PeripheralRef) -> RelinkError {
        switch ref {
        case .address(let address): RelinkError(.unknownPeripheral, "relinkd knows no peripheral at \(address.string)")
        case .id(let id): RelinkError(.unknownPeripheral, "relinkd knows no peripheral \(id)")
        }
    }

    /// The characteristic's BlueZ object on the current link.
    func locate(_ ref: PeripheralRef, _ key: CharacteristicKey) async throws(RelinkError) -> ObjectPath {
        let peripheral = try knownPeripheral(ref)
        guard let device = await linkedDevice(of: peripheral) else { throw RelinkError(.notConnected, "\(ref) has no link") }
        guard let characteristic = await bluez.mirror.characteristic(
            device: device.path, service: key.service.string, characteristic: key.characteristic.string) else {
            let why = switch await absence(of: key, on: device) {
            case .notInDatabase?: GattGrace.unknownCharacteristic(key, .notInDatabase).message
            default: "service \(key.service) with characteristic \(key.characteristic) is not on the link (services \(device.servicesResolved ? "resolved" : "not resolved yet"))"
            }
            throw RelinkError(.unknownCharacteristic, "\(ref): \(why)")
        }
        return characteristic.path
    }
}
