import BlueZ
import RelinkModel
import Restoration

// A program that leaves the bus with requests of its centrals unanswered:
// they are answered at once as if it had never been attached, instead of
// after the 10 s answer bound with an ATT error (seen on the bench: a
// central's write made just as its program closed waited 10 s for 0x0E).
extension Daemon {
    /// The identifier's last program left the bus: each request handed to
    /// it and not yet answered is answered as while no program is attached
    /// (``PeripheralRequestPolicy``): a read gets the static or cached value,
    /// or ATT 0x0E; a write gets its success once its `write-request` event
    /// (already in the outbox, for the program's return) is in the store.
    func answerRequestsOfAGoneProgram(_ id: RestoreIdentifier) async {
        var writes: [CheckedContinuation<HostedReply, Never>] = []
        let record = peripheralRole.records[id] ?? PeripheralManagerRecord()
        for number in peripheralRole.pending.numbers(of: id.rawValue) {
            guard peripheralRole.pending.answer(number, by: id.rawValue) != nil,
                  let waiting = peripheralRole.waiting.removeValue(forKey: number) else { continue }
            guard waiting.isRead else {
                writes.append(waiting.reply)
                continue
            }
            switch PeripheralRequestPolicy.read(waiting.key, offset: waiting.offset, in: record, clientAttached: false) {
            case .answer(let value): waiting.reply.resume(returning: .value(value))
            case .refuse(let error): waiting.reply.resume(returning: .error(error))
            case .forward: waiting.reply.resume(returning: .error(.unlikelyError))  // not without a program
            }
        }
        guard !writes.isEmpty else { return }
        logger.info("the program left with writes unanswered: they are answered once stored", metadata: .journal([
            .restoreID: "\(id)", .count: "\(writes.count)",
        ]))
        await flushCommits()
        for reply in writes { reply.resume(returning: .done) }
    }
}
