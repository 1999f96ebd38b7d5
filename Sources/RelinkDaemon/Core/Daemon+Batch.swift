import BlueZ
import DBus
import Logging
import RelinkStore
import Restoration

// Carrying out a ``RestoreBatch``: one durable commit for many store
// requests, StartNotify calls concurrently with it.
extension Daemon {
    /// Opens a batch scope: until the matching ``endBatch()``, machine
    /// actions' store writes and StartNotify calls are gathered.
    func beginBatch() {
        batch.depth += 1
    }

    /// Closes a scope. At the outermost one, issues every gathered
    /// StartNotify concurrently and, meanwhile, commits every gathered store
    /// request in one transaction; returns when both are done (so before
    /// the current input's handling ends and anything is acknowledged).
    func endBatch() async {
        precondition(batch.depth > 0, "endBatch without beginBatch")
        batch.depth -= 1
        guard batch.depth == 0 else { return }
        for peripheral in batch.released {
            for request in batch.held.release(peripheral) { enqueue(request) }  // after the link's `connected`
        }
        batch.released = []
        let notifies = batch.notifies
        batch.notifies = []
        guard !notifies.isEmpty else {
            await flushCommits()
            return
        }
        let bluez = self.bluez
        await withTaskGroup(of: (RestoreBatch.Notify, ConnectionFailure?).self) { group in
            for notify in notifies {
                group.addTask {
                    do {
                        try await bluez.startNotify(notify.characteristic)
                        return (notify, nil)
                    } catch {
                        return (notify, FailureMapping.failure(error))
                    }
                }
            }
            await flushCommits()
            for await (notify, failure) in group {
                notifyDone(notify, failure: failure)
            }
        }
    }

    /// Appends an event to the outbox of each identifier in the next
    /// commit, which is made before the next control call is handled and
    /// before any other write: inside a batch scope at its end, else by a
    /// ``DaemonInput/flushCommits`` input queued behind the inputs already
    /// waiting (so the notified values of a burst share one commit).
    /// Errors are journalled at the commit.
    /// - Throws: ``ControlError/invalidArguments(_:)`` when the event cannot be encoded.
    func emitGathered(_ event: RelinkEvent, to ids: [CoreIdentifier]) throws(ControlError) {
        guard !ids.isEmpty else { return }
        var mutations: [StoreMutation] = []
        for id in ids { mutations.append(.appendEvent(try StoreMapping.draft(event, for: id))) }
        gather(mutations, event: event, to: ids)
        if !batch.isOpen && !batch.flushQueued {
            batch.flushQueued = true
            inputContinuation.yield(.flushCommits)
        }
    }

    func gather(_ mutations: [StoreMutation], event: RelinkEvent, to ids: [CoreIdentifier]) {
        let notes = ids.map { RestoreBatch.EventNote(name: event.name, identifier: $0, peripheral: event.peripheral) }
        enqueue(RestoreBatch.Request(mutations: mutations, notes: notes))
    }

    /// Adds a request to the next commit. Its events are numbered now, so
    /// that the list's order is numbering order, and go to attached clients
    /// at once when the sequencer allows (``numberEvents(_:)``), not after
    /// the commit.
    func enqueue(_ request: RestoreBatch.Request) {
        var request = request
        numberEvents(&request.mutations)
        batch.requests.append(request)
    }

    /// The ``DaemonInput/flushCommits`` input.
    func flushQueuedCommits() async {
        batch.flushQueued = false
        await flushCommits()
    }

    /// A StartNotify's outcome, handled in the same input that issued it.
    private func notifyDone(_ notify: RestoreBatch.Notify, failure: ConnectionFailure?) {
        let metadata: Logger.Metadata = ["RELINK_PERIPHERAL": "\(notify.peripheral)", "RELINK_CHARACTERISTIC": "\(notify.key)"]
        guard let failure else {
            batch.held.started(notify.peripheral, notify.key, on: notify.characteristic)
            gattRetries[notify.peripheral] = nil
            logger.info("notifications armed", metadata: metadata)
            return
        }
        planner.startNotifyFailed(notify.peripheral, notify.key)
        batch.held.ended(notify.peripheral, notify.key)
        logger.warning("StartNotify failed", metadata: metadata.merging([
            "RELINK_ERROR": "\(failure.errorName)", "RELINK_ERROR_CLASS": "\(failure.failureClass.rawValue)",
        ]) { $1 })
    }

    /// Applies every gathered store request in one transaction. If that
    /// fails, applies them one by one, in order, so that one bad request
    /// costs only itself (as it would have unbatched); each failure is
    /// journalled, as ``perform(_:for:)`` journals store failures.
    func flushCommits() async {
        let requests = batch.requests
        batch.requests = []
        guard !requests.isEmpty else { return }
        // Numbered when gathered (``enqueue(_:)``); the retries below keep
        // the numbers clients may have seen.
        var committed = requests
        do {
            try await commitNow(requests.flatMap(\.mutations), final: false)
        } catch {
            committed = []
            for request in requests {
                do {
                    try await commitNow(request.mutations)
                    committed.append(request)
                } catch {
                    logger.error("cannot store a machine's change", metadata: ["RELINK_ERROR": "\(error)"])
                }
            }
        }
        for note in committed.flatMap(\.notes) {
            logger.info("event \(note.name)", metadata: ["RELINK_RESTORE_ID": "\(note.identifier)", "RELINK_PERIPHERAL": "\(note.peripheral)", "RELINK_EVENT": "\(note.name)"])
        }
    }
}
