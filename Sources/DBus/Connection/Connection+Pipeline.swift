extension Connection {
    /// Sends `calls` back to back, in this order, without waiting for any
    /// reply in between, and returns each call's reply or error in the same
    /// order: what a client does to keep a service busy, and how a test
    /// checks that a service applies one sender's calls in bus order.
    ///
    /// Each call is made by a task on this connection's serial I/O
    /// executor, started in order, which queues its call before it first
    /// suspends; the replies prove it (a reply names its call's serial, and
    /// serials are given in sending order).
    /// - Throws: ``DBusError`` `Failed` when the calls did not leave in
    ///   order (then nothing can be concluded from the replies).
    public func callPipelined(_ calls: [Message], timeout: Duration = .seconds(25)) async throws -> [Result<Message, any Error>] {
        let results = await withTaskGroup(of: (Int, Result<Message, any Error>).self) { group in
            for (i, m) in calls.enumerated() {
                group.addTask(executorPreference: executor) {
                    do { return (i, .success(try await self.call(m, timeout: timeout))) } catch { return (i, .failure(error)) }
                }
            }
            var results = [Result<Message, any Error>?](repeating: nil, count: calls.count)
            for await (i, r) in group { results[i] = r }
            return results.compactMap { $0 }
        }
        let serials = results.compactMap { r -> UInt32? in
            if case .success(let reply) = r { reply.replySerial } else { nil }
        }
        guard serials == serials.sorted() else {
            throw DBusError(.failed, "the pipelined calls did not leave in order: reply serials \(serials.prefix(20))...")
        }
        return results
    }
}
