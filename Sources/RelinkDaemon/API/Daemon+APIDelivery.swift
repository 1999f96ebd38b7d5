import DBus
import Logging
import RelinkStore
import Restoration

// Event delivery: replay after a Register/Watch reply, then live events
// after each commit, unicast to each attached client.
extension Daemon {
    /// How many stored events one replay read takes.
    static let replayPage = 1000

    /// Hook of ``commit(_:)``: called with what was just committed.
    func committed(_ mutations: [StoreMutation], _ commit: StoreCommit) {
        var appended = commit.appendedSequences.makeIterator()
        var touched: [CoreIdentifier] = []
        for mutation in mutations {
            switch mutation {
            case .appendEvent(let draft):
                guard let sequence = appended.next(), let id = try? StoreMapping.coreIdentifier(draft.identifier) else { continue }
                api.outboxes[id]?.appended(sequence)
                if touched.last != id { touched.append(id) }
                deliverLive(id, sequence: sequence, kind: draft.kind, payload: String(decoding: draft.payload, as: UTF8.self))
            case .acknowledgeEvents(let storeID, let through):
                guard let id = try? StoreMapping.coreIdentifier(storeID) else { continue }
                api.outboxes[id]?.acknowledged(through: through)
                touched.append(id)
            default:
                continue
            }
        }
        for id in Set(touched) { outboxChanged(id) }
    }

    private func deliverLive(_ id: CoreIdentifier, sequence: Int64, kind: String, payload: String) {
        guard let clients = api.attachments[id], let publisher else { return }
        for (name, attachment) in clients.sorted(by: { $0.key < $1.key }) where attachment.live && attachment.cursor < sequence {
            publisher.sendEvent(id, sequence: sequence, kind: kind, payload: payload, to: name)
            api.attachments[id]?[name]?.cursor = sequence
        }
    }

    /// Sends a client the stored events above `after`, then makes it live.
    func startDelivery(_ id: CoreIdentifier, to client: String, after: Int64) async {
        guard api.attachments[id]?[client] != nil, let publisher else { return }
        var cursor = after
        while true {
            let page: [OutboxEvent]
            do { page = try await storedEvents(id, after: cursor, limit: Self.replayPage) } catch {
                logger.error("cannot read events to replay", metadata: ["RELINK_RESTORE_ID": "\(id)", "RELINK_ERROR": "\(error)"])
                break
            }
            // The client may have left while the store was read.
            guard api.attachments[id]?[client] != nil else { return }
            for event in page {
                publisher.sendEvent(id, sequence: event.sequence, kind: event.kind, payload: String(decoding: event.payload, as: UTF8.self), to: client)
                cursor = event.sequence
            }
            if page.count < Self.replayPage { break }
        }
        api.attachments[id]?[client]?.live = true
        api.attachments[id]?[client]?.cursor = cursor
    }

    /// Detaches a client that left the bus.
    func clientLeft(_ name: String) {
        api.noteLeft(name)
        for id in api.attachments.keys where api.attachments[id]?[name] != nil {
            api.attachments[id]?[name] = nil
            logger.debug("client detached", metadata: ["RELINK_RESTORE_ID": "\(id)", "RELINK_CLIENT": "\(name)"])
        }
    }
}
