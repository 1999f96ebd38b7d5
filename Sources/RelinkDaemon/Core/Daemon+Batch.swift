import BlueZ
import Foundation
import DBus
import Logging
import RelinkStore
import Restoration
import RelinkModel
import RelinkAPI

// Carrying out a ``RestoreBatch``: one durable commit for many store
// requests, StartNotify calls concurrently with it.
extension Daemon {
    /// Opens a batch scope: until the matching ``endBatch()``, machine
    /// actions' store writes and StartNotify calls are gathered.
    func beginBatch() {
        writes.batch.depth += 1
    }

    /// Closes a scope. At the outermost one, hands every gathered store
    /// request to the store and issues every gathered StartNotify, all
    /// without waiting: the loop goes on with its next input while the disk
    /// and bluetoothd work (``CommitPipeline``; StartNotify outcomes come
    /// back as ``DaemonInput/notifyDone(_:_:_:)``). Whatever must come after
    /// the commit (a client's call) waits for it (``flushCommits()``).
    func endBatch() {
        precondition(writes.batch.depth > 0, "endBatch without beginBatch")
        writes.batch.depth -= 1
        guard writes.batch.depth == 0 else { return }
        for peripheral in writes.batch.released {
            for request in writes.batch.held.release(peripheral) { enqueue(request) }  // after the link's `connected`
        }
        writes.batch.released = []
        let notifies = writes.batch.notifies
        writes.batch.notifies = []
        let bluez = self.bluez
        for notify in notifies {
            let issued = writes.batch.held.issue(notify.peripheral)
            loop.spawned.append {
                do {
                    try await bluez.startNotify(notify.characteristic)
                    return [.notifyDone(notify, issued, nil)]
                } catch {
                    return [.notifyDone(notify, issued, FailureMapping.failure(error))]
                }
            }
        }
        submitGathered()
    }

    /// Appends an event to the outbox of each identifier in the next
    /// commit, which is made before the next control call is handled and
    /// before any other write: inside a batch scope at its end, else by a
    /// ``DaemonInput/flushCommits`` input queued behind the inputs already
    /// waiting (so the notified values of a burst share one commit).
    /// Errors are journalled at the commit.
    /// - Throws: `InvalidArguments` when the event cannot be encoded.
    func emitGathered(_ event: RelinkEvent, to ids: [RestoreIdentifier]) throws(RelinkError) {
        guard !ids.isEmpty else { return }
        enqueueGathered(try Self.eventRequest(event, to: ids))
    }

    /// Adds a request to the next commit, made as ``emitGathered(_:to:)``'s is.
    func enqueueGathered(_ request: RestoreBatch.Request) {
        enqueue(request)
        if !writes.batch.isOpen && !writes.batch.flushQueued {
            writes.batch.flushQueued = true
            inputContinuation.yield(.flushCommits)
        }
    }

    /// The store request that appends `event` to the outbox of each of
    /// `ids`, with the journal line each gets once it is committed.
    /// - Throws: `InvalidArguments` when the event cannot be encoded.
    static func eventRequest(_ event: RelinkEvent, to ids: [RestoreIdentifier]) throws(RelinkError) -> RestoreBatch.Request {
        var mutations: [StoreMutation] = []
        let at = Date()
        let payload = try StoreMapping.payload(event, at: at)
        for id in ids { mutations.append(.appendEvent(try StoreMapping.draft(event, payload: payload, for: id, at: at))) }
        let notes = ids.map { RestoreBatch.EventNote(name: event.name, identifier: $0, peripheral: event.peripheral) }
        return RestoreBatch.Request(mutations: mutations, notes: notes)
    }

    /// Adds a request to the next commit. Its events are numbered now, so
    /// that the list's order is numbering order, and go to attached clients
    /// at once when the sequencer allows (``numberEvents(_:)``), not after
    /// the commit.
    func enqueue(_ request: RestoreBatch.Request) {
        var request = request
        numberEvents(&request.mutations)
        writes.batch.requests.append(request)
    }

    /// The ``DaemonInput/flushCommits`` input: the gathered writes go to
    /// the store; the loop does not wait for them.
    func flushQueuedCommits() {
        writes.batch.flushQueued = false
        submitGathered()
    }

    /// A StartNotify's outcome. One about a link that has gone down since
    /// (or a bluetoothd that has gone) changes nothing but the record of
    /// sessions that still stand: the planner re-arms at the next link-up.
    func notifyDone(_ notify: RestoreBatch.Notify, _ issued: HeldSessions.Issued, failure: ConnectionFailure?) async {
        var metadata = deviceFields(notify.peripheral)
        metadata[JournalField.characteristic.rawValue] = "\(notify.key)"
        guard let failure else {
            guard writes.batch.held.sessionsLast(since: issued) else { return }
            writes.batch.held.started(notify.peripheral, notify.key, on: notify.characteristic)
            queue(core.handle(.notifyArmed(notify.peripheral, notify.key)))
            logger.info("notifications armed", metadata: metadata)
            return
        }
        logger.warning("StartNotify failed", metadata: metadata.merging(.journal([
            .error: "\(failure.errorName)", .errorClass: "\(failure.failureClass.rawValue)",
        ])) { $1 })
        guard writes.batch.held.sameLink(notify.peripheral, since: issued) else { return }
        if await securityFailure(notify, issued, failure) { return }  // paired on demand, StartNotify again
        writes.batch.held.ended(notify.peripheral, notify.key)
        queue(core.handle(.notifyFailed(notify.peripheral, notify.key, failure)))
    }

    /// The journal fields that name a peripheral: its relink identifier and,
    /// when known, its address (which the journal line's text then names).
    func deviceFields(_ peripheral: PeripheralID) -> Logger.Metadata {
        var fields: Logger.Metadata = .journal([.peripheral: "\(peripheral)"])
        if let address = known.peripherals[peripheral]?.address.address { fields[JournalField.address.rawValue] = "\(address.string)" }
        return fields
    }

    /// Hands one request to the store without waiting; its outcome is
    /// handled in submission order by ``drainCommits()``, for `waiter`.
    @discardableResult
    func submit(_ request: RestoreBatch.Request, for waiter: InFlightCommit.Waiter = .loop) -> UInt64 {
        let ticket = writes.commits.issue()
        writes.inFlight[ticket] = InFlightCommit(request: request, waiter: waiter)
        let commits = self.writes.commits, continuation = inputContinuation
        store.submit(request.mutations) { outcome in
            if commits.finish(ticket, outcome) { continuation.yield(.commitsDone) }
        }
        return ticket
    }

    /// Hands every gathered request to the store, in order, each on its
    /// own (the store's group commit makes them one transaction, and a bad
    /// one fails alone).
    func submitGathered() {
        let requests = writes.batch.requests
        writes.batch.requests = []
        for request in requests { submit(request) }
    }

    /// Commits every gathered write and returns once every commit handed
    /// to the store so far has returned and been handled.
    func flushCommits() async {
        submitGathered()
        await settleCommits(through: writes.commits.lastIssued)
    }

    /// Waits for the commits up to `ticket`, then handles what is ready.
    func settleCommits(through ticket: UInt64) async {
        await writes.commits.wait(through: ticket)
        drainCommits()
    }

    /// Handles the commits that have returned, in submission order: the
    /// outbox mirror and the sequencer learn what is stored (``committed(_:_:)``),
    /// failures are journalled (``notCommitted(_:error:)``), and events get
    /// their journal line.
    func drainCommits() {
        for (ticket, outcome) in writes.commits.take() {
            guard let commit = writes.inFlight.removeValue(forKey: ticket) else { continue }
            let isReport = UnstoredEvents.isReport(commit.request.mutations)
            if isReport { writes.unstored.reportDone(committed: (try? outcome.get()) != nil) }
            switch outcome {
            case .success(let stored):
                if let line = writes.unstored.commitSucceeded(now: clock.now) { journal(line) }
                committed(commit.request.mutations, stored)
                for note in commit.request.notes {
                    var metadata: Logger.Metadata = .journal([.restoreID: "\(note.identifier)", .event: "\(note.name)"])
                    if let peripheral = note.peripheral { metadata[JournalField.peripheral.rawValue] = "\(peripheral)" }
                    logger.log(level: note.level, "event \(note.name)", metadata: metadata)
                }
            case .failure(let error):
                notCommitted(commit.request.mutations, error: error)
            }
            switch commit.waiter {
            case .loop:
                // A failure is journalled by `notCommitted` at a bounded rate;
                // a change other than events is named on its own (it is state).
                if case .failure(let error) = outcome, !isReport,
                   commit.request.mutations.contains(where: { if case .appendEvent = $0 { false } else { true } }) {
                    logger.error("cannot store a machine's change", metadata: .journal([.error: "\(error)"]))
                }
            case .caller:
                writes.commitOutcomes[ticket] = outcome
            case .acknowledgement(let caller, let reply):
                reply.resume(returning: outcome.map { _ in APIResult() }.mapError { error in
                    let refusal = Self.controlError(error)
                    logAPIRefusal(refusal, from: caller)
                    return refusal
                })
            }
        }
        // Events a failed commit lost are counted in the store once it takes writes again.
        if let report = writes.unstored.takeReport() { submit(RestoreBatch.Request(mutations: report)) }
    }

    /// The daemon's error for a store error.
    static func controlError(_ error: StoreError) -> RelinkError {
        switch error {
        case .unknownIdentifier(let id): .unknownIdentifier(named: id.rawValue)
        case .invalidArgument(let m): RelinkError(.invalidArguments, m)
        case .invalidAcknowledgement: RelinkError(.invalidArguments, "\(error)")
        case .unknownPeripheral(let m): RelinkError(.unknownPeripheral, m)
        default: RelinkError(.storeFailed, "store: \(error)")
        }
    }
}
