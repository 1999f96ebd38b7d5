import RelinkAPI
import RelinkModel
import Restoration

// `UpdateValues` (issue 23 item 4): a program sends up to 16 updates of one
// characteristic in one call instead of one call each; the round trip per
// value was what held relinkd at 8% of a GATT server straight on bluetoothd
// (docs/benchmarks.md, session 12).
extension Daemon {
    /// Takes the values in order while the update window has room, as
    /// that many `UpdateValue` calls would. The last value taken of a
    /// `cacheable` characteristic is committed before the reply (an
    /// acknowledged update's value survives a SIGKILL right after it),
    /// then the values go to bluetoothd in order. Returns how many were
    /// taken.
    /// - Throws: `UpdateQueueFull` when not even the first
    ///   fits (a `ready-to-update` follows); the first value's other errors
    ///   (`UnknownCharacteristic`, `NotSupported`), nothing taken;
    ///   `StoreFailed` when the kept value could not be committed, nothing
    ///   sent.
    @discardableResult
    func updateMany(_ id: RestoreIdentifier, _ key: CharacteristicKey, _ values: [[UInt8]],
                    record: PeripheralManagerRecord) async throws(RelinkError) -> Int {
        var taken = 0
        for value in values {
            do {
                try admitUpdate(id, key, value, record: record)
                taken += 1
            } catch where taken > 0 && error.code == .updateQueueFull {
                break
            }
        }
        if let last = values.prefix(taken).last {
            do {
                try await keepCached(last, for: key, of: id, in: record)
            } catch {
                for _ in 0..<taken { peripheralRole.windows[id]?.giveBack() }
                throw error
            }
        }
        for value in values.prefix(taken) { enqueueUpdate(id, QueuedUpdate(key: key, value: value)) }
        return taken
    }
}
