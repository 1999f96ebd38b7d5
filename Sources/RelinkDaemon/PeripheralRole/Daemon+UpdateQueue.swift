import BlueZ
import RelinkModel
import Restoration

/// An update the program made (`UpdateValue`) that relinkd accepted and
/// has not yet handed to the bus.
struct QueuedUpdate {
    /// The characteristic.
    var key: CharacteristicKey
    /// The value.
    var value: [UInt8]
}

// The peripheral role's updates go out one at a time per identifier, in
// the order the program made them: each is handed to the bus only once the
// one before it was (sent concurrently, the BlueZ connection's actor took
// them in any order, and a subscribed central saw the values reordered).
extension Daemon {
    /// Queues an accepted update; sends it at once when none is on its way.
    func enqueueUpdate(_ id: RestoreIdentifier, _ update: QueuedUpdate) {
        peripheralRole.outgoing[id, default: []].append(update)
        if peripheralRole.outgoing[id]?.count == 1 { sendNextUpdate(id) }
    }

    /// The first queued update has been handed to the bus (or failed): the next one goes.
    func updateSent(_ id: RestoreIdentifier) {
        guard var queue = peripheralRole.outgoing[id], !queue.isEmpty else { return }
        queue.removeFirst()
        peripheralRole.outgoing[id] = queue.isEmpty ? nil : queue
        sendNextUpdate(id)
    }

    /// Hands the first queued update of the identifier to the bus.
    func sendNextUpdate(_ id: RestoreIdentifier) {
        guard let update = peripheralRole.outgoing[id]?.first else { return }
        let bluez = self.bluez, root = Self.hostedRoot(id), logger = self.logger
        loop.spawned.append {
            do { try await bluez.notifyHosted(root: root, update.key, update.value) } catch {
                logger.warning("an update could not be sent", metadata: .journal([
                    .restoreID: "\(id)", .characteristic: "\(update.key)", .error: "\(error)",
                ]))
            }
            return [.peripheralRole(.updateSent(id))]
        }
    }
}
