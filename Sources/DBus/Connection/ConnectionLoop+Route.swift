import Synchronization

/// Routing what the I/O thread read, in bus order: replies to their waiting
/// calls, signals to their subscribers (inline handlers first, when they
/// may take them), method calls to the incoming stream that `serve()` drains.
extension ConnectionLoop {
    /// Hands the leading signals of a batch to their subscriber's inline
    /// handler, in order, while each has exactly one subscriber, that
    /// subscriber has an inline handler and nothing in its stream, and the
    /// handler takes it. Only when no task waits to run: a job queued
    /// before (a reply's continuation, an earlier signal's consumer) must
    /// not be overtaken. Returns how many were taken.
    private func routeInline(_ batch: [Message]) -> Int {
        var taken = 0
        for m in batch {
            guard m.kind == .signal, m.sender != "org.freedesktop.DBus", m.path?.rawValue != "/org/freedesktop/DBus/Local" else { break }
            let handler = state.withLock { s -> (@Sendable (Message) -> Bool)? in
                guard s.jobs.isEmpty else { return nil }
                var found: Subscriber?
                for sub in s.subscribers.values where s.delivers(m, to: sub) {
                    if found != nil { return nil }
                    found = sub
                }
                guard let found, found.backlog.unfinished.load(ordering: .sequentiallyConsistent) == 0 else { return nil }
                return found.inline
            }
            guard let handler, handler(m) else { break }
            taken += 1
        }
        return taken
    }

    /// Routes received messages in order. Returns true on disconnection.
    func route(_ whole: [Message]) -> Bool {
        let taken = routeInline(whole)
        if taken == whole.count { return false }
        let batch = whole[taken...]
        var replies: [(Reply, Message)] = []
        var yields: [UInt64: (SignalContinuation, Backlog, [Message])] = [:]
        var yieldOrder: [UInt64] = []
        var calls: [Message] = []
        var disconnected = false
        state.withLock { s in
            for m in batch {
                switch m.kind {
                case .methodReturn, .error:
                    guard let rs = m.replySerial, let p = s.pending.removeValue(forKey: rs) else { continue }
                    s.serialByToken[p.token] = nil
                    if let name = p.ownerOf, s.tracked[name] != nil {
                        if m.kind == .methodReturn, case .string(let owner)? = m.body.first {
                            s.owners[name] = owner
                        } else {
                            s.owners[name] = nil
                        }
                    }
                    replies.append((p.continuation, m))
                case .signal:
                    if m.path?.rawValue == "/org/freedesktop/DBus/Local", m.member == "Disconnected" {
                        disconnected = true
                        continue
                    }
                    if m.sender == "org.freedesktop.DBus", m.member == "NameOwnerChanged",
                        m.body.count == 3, case .string(let name) = m.body[0], s.tracked[name] != nil,
                        case .string(let newOwner) = m.body[2]
                    {
                        s.owners[name] = newOwner.isEmpty ? nil : newOwner
                    }
                    for (id, sub) in s.subscribers where s.delivers(m, to: sub) {
                        if yields[id] == nil {
                            yields[id] = (sub.continuation, sub.backlog, [m])
                            yieldOrder.append(id)
                        } else {
                            yields[id]?.2.append(m)
                        }
                    }
                case .methodCall:
                    calls.append(m)
                }
            }
        }
        for (c, m) in replies {
            if let e = m.error { c.resume(throwing: e) } else { c.resume(returning: m) }
        }
        for id in yieldOrder {
            guard let (c, backlog, ms) = yields[id] else { continue }
            backlog.unfinished.add(ms.count, ordering: .sequentiallyConsistent)
            backlog.count.add(ms.count, ordering: .relaxed)
            c.yield(ms)
        }
        for m in calls { incomingContinuation.yield(m) }
        return disconnected
    }
}
