import RelinkAPI
import RelinkModel
import Restoration

extension EventPayload {
    /// The wire payload of a core event.
    init(_ event: RelinkEvent) {
        switch event {
        case .discovered(let p, let advertisement): self = .discovered(peripheral: p, advertisement: advertisement)
        case .connected(let p, let address, let route, let limits): self = .connected(peripheral: p, address: address, route: route, limits: limits)
        case .restored(let p, let address, let route, let limits): self = .restored(peripheral: p, address: address, route: route, limits: limits)
        case .failedToConnect(let p, let reason): self = .failedToConnect(peripheral: p, reason: reason)
        case .disconnected(let p, let reason): self = .disconnected(peripheral: p, reason: reason)
        case .valueNotified(let p, let key, let value): self = .valueNotified(peripheral: p, characteristic: key, value: value)
        case .subscriptionFailed(let p, let key, let reason): self = .subscriptionFailed(peripheral: p, characteristic: key, reason: reason)
        case .adapterStateChanged(let adapter, let status): self = .adapterState(adapter: adapter, status: status)
        case .servicesChanged(let p, let database): self = .servicesChanged(peripheral: p, database: database)
        case .bondRemoved(let p): self = .bondRemoved(peripheral: p)
        case .pairingRequest(let p, let request, let kind, let passkey): self = .pairingRequest(peripheral: p, request: request, kind: kind, passkey: passkey)
        case .peripheralManager(let event): self = .peripheralManager(event)
        case .transfer(let event): self = .transfer(event)
        case .nameUpdated(let p, let update):
            self = .nameUpdated(peripheral: p, update: NameUpdatePayload(
                change: update.change,
                resolved: update.resolved.map { .init(name: $0.name, source: $0.source, reason: $0.reason.rawValue) },
                names: update.names))
        }
    }
}
