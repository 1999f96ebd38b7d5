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

// The peripheral role's updates go out in the order the program made them,
// one task per identifier at a time (sent concurrently, the BlueZ
// connection's actor took them in any order, and a subscribed central saw
// the values reordered). The task takes every update queued when it
// starts, one after another, and the loop hears of them once at its end:
// one loop round per batch instead of one per value (issue 23 item 4).
extension Daemon {
    /// Queues an accepted update; sends it at once when none is on its way.
    func enqueueUpdate(_ id: RestoreIdentifier, _ update: QueuedUpdate) {
        peripheralRole.outgoing[id, default: []].append(update)
        if peripheralRole.sending[id] == nil { sendQueuedUpdates(id) }
    }

    /// The first `count` queued updates have been handed to the bus (or
    /// failed): those queued since go next.
    func updatesSent(_ id: RestoreIdentifier, count: Int) {
        peripheralRole.sending[id] = nil
        guard var queue = peripheralRole.outgoing[id] else { return }
        queue.removeFirst(min(count, queue.count))
        peripheralRole.outgoing[id] = queue.isEmpty ? nil : queue
        sendQueuedUpdates(id)
    }

    /// Hands every queued update of the identifier to the bus, in order, in one task.
    func sendQueuedUpdates(_ id: RestoreIdentifier) {
        guard let batch = peripheralRole.outgoing[id], !batch.isEmpty else { return }
        peripheralRole.sending[id] = batch.count
        let bluez = self.bluez, root = Self.hostedRoot(id), logger = self.logger
        loop.spawned.append {
            for update in batch {
                do { try await bluez.notifyHosted(root: root, update.key, update.value) } catch {
                    logger.warning("an update could not be sent", metadata: .journal([
                        .restoreID: "\(id)", .characteristic: "\(update.key)", .error: "\(error)",
                    ]))
                }
            }
            return [.peripheralRole(.updateSent(id, count: batch.count))]
        }
    }
}
