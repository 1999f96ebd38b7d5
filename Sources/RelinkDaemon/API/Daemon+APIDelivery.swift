import DBus
import Logging
import RelinkStore
import Restoration
import RelinkModel
import RelinkAPI

// Event delivery: replay after a Register/Watch reply, then live events
// as they happen (before their commit, within the sequencer's window),
// unicast to each attached client.
extension Daemon {
    /// How many stored events one replay read takes.
    static let replayPage = 1000

    /// Numbers the events among `mutations` (each once) and sends attached
    /// clients those that may go out before their commit
    /// (``EventSequencer``). Called when a write is gathered (``enqueue(_:)``)
    /// or, for a direct commit, just before it goes to the store in the same
    /// actor turn; the store applies requests in the order they are handed
    /// to it, so numbering order is commit order.
    func numberEvents(_ mutations: inout [StoreMutation]) {
        var touched: [RestoreIdentifier] = []
        for index in mutations.indices {
            // In place (optional chaining through the dictionary): a copy
            // taken out and written back would copy every event it holds.
            guard case .appendEvent(var draft) = mutations[index], draft.sequence == nil, case let id = draft.identifier,
                  let sequence = api.sequencers[id]?.number(kind: draft.kind, payload: String(decoding: draft.payload, as: UTF8.self))
            else { continue }
            draft.sequence = sequence
            mutations[index] = .appendEvent(draft)
            if touched.last != id { touched.append(id) }
        }
        for id in Set(touched) { releaseEvents(id) }
    }

    /// Sends the identifier's events that may go out now to its live clients.
    private func releaseEvents(_ id: RestoreIdentifier, committedThrough: Int64 = 0) {
        guard let cursor = api.outboxes[id],
              let out = api.sequencers[id]?.release(nextStored: cursor.nextStored, committedThrough: committedThrough)
        else { return }
        for event in out { deliverLive(id, sequence: event.sequence, kind: event.kind, payload: event.payload) }
    }

    /// Called by ``drainCommits()``, in submission order, with what a
    /// request's commit stored.
    func committed(_ mutations: [StoreMutation], _ commit: StoreCommit) {
        var appended: [RestoreIdentifier: [Int64]] = [:]
        var touched: Set<RestoreIdentifier> = []
        for effect in commit.outboxEffects {
            let id = effect.identifier
            api.outboxes[id]?.apply(effect)
            touched.insert(id)
            switch effect {
            case .appended(_, let sequence): appended[id, default: []].append(sequence)
            case .acknowledged(_, let through, _, _): writes.unstored.acknowledged(id, through: through)
            case .dropped, .unstoredCounted: break
            }
        }
        for case .removeIdentifier(let id) in mutations { writes.unstored.forget(id) }
        for (id, sequences) in appended {
            releaseEvents(id, committedThrough: sequences.max() ?? 0)
            api.sequencers[id]?.committed(Set(sequences))
        }
        for id in touched { outboxChanged(id) }
        relaunchCommitted(mutations)
    }

    /// Called by ``drainCommits()`` when a request's commit failed: its
    /// events are not stored. They are counted as dropped at once (the
    /// outbox mirror, and the store once it takes writes again:
    /// ``UnstoredEvents``); the journal hears of it at a bounded rate.
    func notCommitted(_ mutations: [StoreMutation], error: StoreError) {
        var failed: [RestoreIdentifier: Set<Int64>] = [:]
        for case .appendEvent(let draft) in mutations {
            guard let sequence = draft.sequence else { continue }
            failed[draft.identifier, default: []].insert(sequence)
        }
        for (id, sequences) in failed {
            _ = api.sequencers[id]?.failed(sequences)
            if let low = sequences.min(), let high = sequences.max() {
                api.outboxes[id]?.noteUnstored(low...high, count: Int64(sequences.count))
            }
            releaseEvents(id)
            outboxChanged(id)
        }
        if let line = writes.unstored.commitFailed(lost: failed, error: "\(error)", storage: error.isStorageFailure, now: clock.now) { journal(line) }
    }

    /// Writes a line about the store refusing writes (``UnstoredEvents``).
    func journal(_ line: UnstoredEvents.Line) {
        switch line {
        case .started(let error):
            logger.error("the store refuses writes: events are counted as dropped until it takes them again", metadata: .journal([
                .error: "\(error)", .decision: "events-not-stored",
            ]))
        case .still(let requests, let events, let error):
            logger.error("the store still refuses writes: \(requests) more requests failed, \(events) more events not stored", metadata: .journal([
                .error: "\(error)", .count: "\(events)", .decision: "events-not-stored",
            ]))
        case .refused(let events, let error):
            logger.error("\(events) events not stored: the store refused their request (counted as dropped)", metadata: .journal([
                .error: "\(error)", .count: "\(events)", .decision: "events-not-stored",
            ]))
        case .recovered(let requests, let events, let lasted):
            logger.notice("the store takes writes again: \(requests) requests failed and \(events) events were not stored (counted as dropped)", metadata: .journal([
                .count: "\(events)", .duration: "\(lasted)", .decision: "store-writable",
            ]))
        }
    }

    /// Whether everything shown to a client is stored: relinkd may then
    /// leave the clean-stop marker (``EventSequencer``).
    var eventsSettled: Bool { api.sequencers.values.allSatisfy(\.settled) }

    private func deliverLive(_ id: RestoreIdentifier, sequence: Int64, kind: String, payload: String) {
        guard let clients = api.attachments[id], let publisher else { return }
        for (name, attachment) in clients.sorted(by: { $0.key < $1.key }) where attachment.live && attachment.cursor < sequence {
            publisher.sendEvent(id, sequence: sequence, kind: kind, payload: payload, to: name)
            api.attachments[id]?[name]?.cursor = sequence
        }
    }

    /// Sends a client the stored events above `after`, then the events
    /// already out to others and not yet committed, then makes it live.
    func startDelivery(_ id: RestoreIdentifier, to client: String, after: Int64) async {
        guard api.attachments[id]?[client] != nil, let publisher else { return }
        var cursor = after
        while true {
            // A read started now sees every commit up to `stored`.
            let stored = api.outboxes[id]?.lastSequence ?? 0
            let page: [OutboxEvent]
            do { page = try await storedEvents(id, after: cursor, limit: Self.replayPage) } catch {
                logger.error("cannot read events to replay", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
                break
            }
            // The client may have left while the store was read.
            guard api.attachments[id]?[client] != nil else { return }
            for event in page {
                publisher.sendEvent(id, sequence: event.sequence, kind: event.kind, payload: String(decoding: event.payload, as: UTF8.self), to: client)
                cursor = event.sequence
            }
            // More pages, or commits made while this one was read.
            if page.count < Self.replayPage, (api.outboxes[id]?.lastSequence ?? 0) <= stored { break }
        }
        for event in api.sequencers[id]?.released(after: cursor) ?? [] {
            publisher.sendEvent(id, sequence: event.sequence, kind: event.kind, payload: event.payload, to: client)
            cursor = event.sequence
        }
        api.attachments[id]?[client]?.live = true
        api.attachments[id]?[client]?.cursor = cursor
    }

    /// Detaches a client that left the bus; where it was an identifier's
    /// last, its centrals' unanswered requests are answered without it.
    func clientLeft(_ name: String) async {
        api.noteLeft(name)
        closeWriteStreams(of: name)
        for id in api.attachments.keys where api.attachments[id]?[name] != nil {
            api.attachments[id]?[name] = nil
            logger.debug("client detached", metadata: .journal([.restoreID: "\(id)", .client: "\(name)"]))
            if !clientAttached(id) { await answerRequestsOfAGoneProgram(id) }
        }
    }
}
