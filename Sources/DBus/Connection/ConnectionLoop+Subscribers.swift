/// Signal subscribers of the loop: registered by `Connection.signals(matching:)`,
/// matched and fed on the I/O thread in `route`.
extension ConnectionLoop {
    /// Registers a signal subscriber; returns its id, its stream, and
    /// whether its well-known sender just started being tracked.
    func addSubscriber(_ rule: SignalMatch, inline: (@Sendable (Message) -> Bool)? = nil) throws(DBusError) -> (UInt64, AsyncThrowingStream<[Message], any Error>, Backlog, Bool) {
        let (stream, cont) = AsyncThrowingStream<[Message], any Error>.makeStream(bufferingPolicy: .unbounded)
        let backlog = Backlog()
        let result = state.withLock { s -> Result<(UInt64, Bool), DBusError> in
            if let e = s.closedError { return .failure(e) }
            let id = s.nextToken
            s.nextToken += 1
            s.subscribers[id] = Subscriber(rule: rule, continuation: cont, backlog: backlog, inline: inline)
            var newlyTracked = false
            if rule.needsOwnerTracking, let sender = rule.sender {
                s.tracked[sender, default: 0] += 1
                newlyTracked = s.tracked[sender] == 1
            }
            return .success((id, newlyTracked))
        }
        let (id, newlyTracked) = try result.get()
        cont.onTermination = { [weak self] _ in self?.removeSubscriber(id) }
        return (id, stream, backlog, newlyTracked)
    }

    /// Removes a subscriber and tells the bus to drop its rules.
    func removeSubscriber(_ id: UInt64) {
        let (sub, untrack) = state.withLock { s -> (Subscriber?, String?) in
            guard let sub = s.subscribers.removeValue(forKey: id) else { return (nil, nil) }
            var untrack: String?
            if sub.rule.needsOwnerTracking, let sender = sub.rule.sender, let n = s.tracked[sender] {
                if n <= 1 {
                    s.tracked[sender] = nil
                    s.owners[sender] = nil
                    untrack = sender
                } else {
                    s.tracked[sender] = n - 1
                }
            }
            return (sub, untrack)
        }
        guard let sub else { return }
        sub.continuation.finish()
        let rule = sub.rule
        try? submit(.send(BusCalls.removeMatch(rule.description)))
        if let untrack { try? submit(.send(BusCalls.removeMatch(BusCalls.ownerRule(untrack).description))) }
    }
}
