import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import RelinkModel
import RelinkAPI

// Control1 calls: validated requests, answered after their store commit.
// The operations themselves (Daemon+Operations.swift) are shared with the
// client API (API/Daemon+API.swift).
extension Daemon {
    func handleControl(_ request: ControlRequest) async -> ControlReply {
        do {
            return .success(try await control(request))
        } catch {
            logger.info("control call refused", metadata: .journal([.error: "\(error.name)", .errorMessage: "\(error.message)"]))
            return .failure(error)
        }
    }

    private func control(_ request: ControlRequest) async throws(RelinkError) -> [DBusValue] {
        switch request {
        case .register(let id, let uid):
            if core.identifiers.contains(id) { return [] }
            try await createIdentifier(id, owner: uid, namePreference: nil)
            return []
        case .connect(let id, let address, let options):
            try requireRegistered(id)
            return [.string(try await addConnection(id, address: address, options: options).description)]
        case .cancel(let id, let address):
            try requireRegistered(id)
            guard let peripheral = peripheralID(for: address), core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] != nil else {
                throw .unknownPeripheral("\(id) has no connection intent for \(address.string)")
            }
            try await cancelConnection(id, peripheral: peripheral)
            return []
        case .subscribe(let id, let address, let key):
            try requireRegistered(id)
            guard let peripheral = peripheralID(for: address) else {
                throw .unknownPeripheral("no peripheral at \(address.string): connect to it first")
            }
            try await addSubscription(Subscription(identifier: id, peripheral: peripheral, characteristic: key))
            return []
        case .scan(let id, let scan):
            try requireRegistered(id)
            try await setScan(id, scan)
            return []
        case .stopScan(let id):
            try requireRegistered(id)
            try await stopScan(id)
            return []
        case .events(let id, let after):
            try requireRegistered(id)
            return [Self.eventArray(try await storedEvents(id, after: after, limit: 1000))]
        case .ack(let id, let upto):
            try requireRegistered(id)
            try await acknowledge(id, through: upto)
            return []
        case .status:
            return [.string(statusJSON())]
        }
    }

    /// The daemon's state as JSON: identifiers (those `visible` lets
    /// through), their intents and links.
    func statusJSON(visible: (RestoreIdentifier) -> Bool = { _ in true }) -> String {
        var ids: [[String: Any]] = []
        for id in core.identifiers.sorted() where visible(id) {
            var connections: [[String: Any]] = []
            for (intent, machine) in core.machines.sorted(by: { $0.key < $1.key }) where intent.identifier == id {
                var entry: [String: Any] = ["peripheral": intent.peripheral.description, "state": Self.stateName(machine.state)]
                if let address = machine.knownAddress { entry["address"] = address.string }
                entry["attempt"] = machine.attempt
                if let last = health.intentFailures[intent] {
                    entry["last_error"] = last.failure.description
                    entry["last_error_at"] = Int64((last.at.timeIntervalSince1970 * 1000).rounded())
                }
                connections.append(entry)
            }
            let subscriptions = core.planner.subscriptions.filter { $0.identifier == id }.count
            ids.append(["id": id.rawValue, "connections": connections, "subscriptions": subscriptions, "scanning": core.scanIntents[id] != nil])
        }
        let object: [String: Any] = ["ready": isReady, "adapter": adapterName, "identifiers": ids, "discovering": core.scans.isScanning,
                                     "quarantined": Self.quarantineEntries(store.quarantined),
                                     "store": storeHealth,
                                     "unreadable_rows": health.unreadableRows.filter { row in
                                         (try? RestoreIdentifier(row.identifier ?? "")).map(visible) ?? true
                                     }.map { ["table": $0.table, "identifier": $0.identifier ?? "", "reason": $0.reason] }]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether the store takes writes, and how many events it could not
    /// store since relinkd started (each counted as dropped; ``UnstoredEvents``).
    var storeHealth: [String: Any] {
        var entry: [String: Any] = ["refusing_writes": writes.unstored.refusing, "unstored_events": writes.unstored.total]
        if let error = writes.unstored.lastError { entry["last_error"] = error }
        return entry
    }

    /// The databases the store moved aside when relinkd started (it then
    /// started EMPTY), for every caller: the whole store is concerned, not
    /// one identifier. Empty on a usual start.
    static func quarantineEntries(_ files: [QuarantinedFile]) -> [[String: Any]] {
        files.map { file in
            ["path": file.originalPath, "moved_to": file.quarantinedPath, "reason": file.reason.tag,
             "message": file.reason.description, "at": Int64((file.quarantinedAt.timeIntervalSince1970 * 1000).rounded())]
        }
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
