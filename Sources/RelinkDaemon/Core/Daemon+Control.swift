import DBus
import Foundation
import Logging
import RelinkStore
import Restoration

// Control calls: validated requests, answered after their store commit.
extension Daemon {
    func handleControl(_ request: ControlRequest) async -> ControlReply {
        do {
            return .success(try await control(request))
        } catch {
            logger.info("control call refused", metadata: ["RELINK_ERROR": "\(error.name)", "RELINK_ERROR_MESSAGE": "\(error.message)"])
            return .failure(error)
        }
    }

    private func requireRegistered(_ id: CoreIdentifier) throws(ControlError) {
        guard identifiers.contains(id) else { throw .unknownIdentifier("restore identifier \(id) is not registered") }
    }

    private func control(_ request: ControlRequest) async throws(ControlError) -> [DBusValue] {
        switch request {
        case .register(let id, let uid):
            if identifiers.contains(id) { return [] }
            let record: RestoreIdentifierRecord
            do { record = try RestoreIdentifierRecord(id: try StoreMapping.storeIdentifier(id), ownerUID: uid, createdAt: Date()) } catch let e as ControlError {
                throw e
            } catch { throw .invalidArguments("\(error)") }
            try await commit([.putIdentifier(record)])
            identifiers.insert(id)
            logger.info("identifier registered", metadata: ["RELINK_RESTORE_ID": "\(id)"])
            return []

        case .connect(let id, let address, let options):
            try requireRegistered(id)
            let peripheral = await knownPeripheral(for: address, services: options.services)
            guard peripherals[peripheral] != nil else { throw .failed("cannot store the peripheral") }
            try await rememberServices(options.services, of: peripheral)
            let intent = ConnectionIntentID(identifier: id, peripheral: peripheral)
            if let existing = machines[intent], !existing.state.isTerminal {
                throw .alreadyExists("\(id) already has a connection intent for \(address.string)")
            }
            // The intent is durable before anything acts on it; a failed
            // commit leaves no machine behind and is the reply.
            try await persist(ConnectionIntentRecord(intent: intent, options: options, address: address, phase: .pending))
            var machine = Machine(intent: intent, options: options, knownAddress: address, clock: clock)
            let actions: [Machine.Action]
            switch registry.claim(intent) {
            case .owner: actions = machine.start()
            case .sharing(let owner): actions = machine.claimedByOtherIntent(owner: owner)
            }
            machines[intent] = machine
            await perform(actions, for: intent)
            return [.string(peripheral.description)]

        case .cancel(let id, let address):
            try requireRegistered(id)
            guard let peripheral = peripheralID(for: address), var machine = machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] else {
                throw .unknownPeripheral("\(id) has no connection intent for \(address.string)")
            }
            let intent = machine.intent
            let actions = machine.cancel(linkSharedWithOthers: registry.isShared(beyond: intent))
            machines[intent] = nil
            await perform(actions, for: intent)
            // cancel's persist removed the row; make sure even if it failed.
            try await commit([.removeConnectionIntent(try StoreMapping.storeIdentifier(id), peripheral: peripheral.uuid)])
            if let newOwner = registry.release(intent) { immediate.append((newOwner, .ownershipGranted)) }
            return []

        case .subscribe(let id, let address, let key):
            try requireRegistered(id)
            guard let peripheral = peripheralID(for: address) else {
                throw .unknownPeripheral("no peripheral at \(address.string): connect to it first")
            }
            let subscription = CoreSubscription(identifier: id, peripheral: peripheral, characteristic: key)
            if planner.subscriptions.contains(subscription) { return [] }
            try await commit([.addSubscription(try StoreMapping.storeSubscription(subscription))])
            await run(planner.subscribe(subscription))
            return []

        case .scan(let id, let scan):
            try requireRegistered(id)
            let row = StoreScanIntent(
                identifier: try StoreMapping.storeIdentifier(id),
                serviceUUIDs: scan.services.compactMap(StoreMapping.storeUUID).sorted(), allowDuplicates: scan.allowDuplicates, updatedAt: Date())
            try await commit([.putScanIntent(row)])
            scanIntents[id] = scan
            await apply(scans.register(scan, for: .identifier(id)))
            return []

        case .stopScan(let id):
            try requireRegistered(id)
            try await commit([.removeScanIntent(try StoreMapping.storeIdentifier(id))])
            scanIntents[id] = nil
            await apply(scans.unregister(.identifier(id)))
            return []

        case .events(let id, let after):
            try requireRegistered(id)
            let events: [OutboxEvent]
            do { events = try await store.events(for: try StoreMapping.storeIdentifier(id), after: after) } catch let e as ControlError {
                throw e
            } catch { throw .failed("store: \(error)") }
            let items = events.map { event in
                DBusValue.structure([.uint64(UInt64(max(0, event.sequence))), .string(event.kind), .string(String(decoding: event.payload, as: UTF8.self))])
            }
            return [.array(.structure([.uint64, .string, .string]), items)]

        case .ack(let id, let upto):
            try requireRegistered(id)
            try await commit([.acknowledgeEvents(try StoreMapping.storeIdentifier(id), through: upto)])
            return []

        case .status:
            return [.string(statusJSON())]
        }
    }

    /// Keeps the wanted services on the peripheral's row (they feed
    /// auto-connect and the scan strategy after a restart).
    private func rememberServices(_ services: Set<CoreUUID>, of peripheral: PeripheralID) async throws(ControlError) {
        guard var row = peripherals[peripheral] else { return }
        let wanted = Set(row.serviceUUIDs).union(services.compactMap(StoreMapping.storeUUID)).sorted()
        guard wanted != row.serviceUUIDs.sorted() else { return }
        row.serviceUUIDs = wanted
        try await commit([.putPeripheral(row)])
        peripherals[peripheral] = row
    }

    /// The daemon's state as JSON: identifiers, their intents and links.
    func statusJSON() -> String {
        var ids: [[String: Any]] = []
        for id in identifiers.sorted() {
            var connections: [[String: Any]] = []
            for (intent, machine) in machines.sorted(by: { $0.key < $1.key }) where intent.identifier == id {
                var entry: [String: Any] = ["peripheral": intent.peripheral.description, "state": Self.stateName(machine.state)]
                if let address = machine.knownAddress { entry["address"] = address.string }
                connections.append(entry)
            }
            let subscriptions = planner.subscriptions.filter { $0.identifier == id }.count
            ids.append(["id": id.rawValue, "connections": connections, "subscriptions": subscriptions, "scanning": scanIntents[id] != nil])
        }
        let object: [String: Any] = ["ready": isReady, "adapter": adapterName, "identifiers": ids, "discovering": scans.isScanning]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func stateName(_ state: Machine.State) -> String {
        switch state {
        case .idle: "idle"
        case .trying(let s): "trying-\(s.rawValue)"
        case .connecting: "connecting"
        case .waitingForServices: "waiting-for-services"
        case .connected: "connected"
        case .backingOff: "backing-off"
        case .waitingForAdapter: "waiting-for-adapter"
        case .sharing(_, let link): link == nil ? "sharing" : "connected-shared"
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }
}
