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
                throw RelinkError(.unknownPeripheral, "\(id) has no connection intent for \(address.string)")
            }
            try await cancelConnection(id, peripheral: peripheral)
            return []
        case .subscribe(let id, let address, let key):
            try requireRegistered(id)
            guard let peripheral = peripheralID(for: address) else {
                throw RelinkError(.unknownPeripheral, "no peripheral at \(address.string): connect to it first")
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
