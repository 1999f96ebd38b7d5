import DBus

extension BlueZClient {
    struct Waiter {
        let id: UInt64
        let predicate: @Sendable (Mirror) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Suspends until `predicate` holds on the mirror (checked after every
    /// applied signal), or throws ``BlueZError/timedOut(_:)``.
    public func wait(timeout: Duration, _ what: String, until predicate: @escaping @Sendable (Mirror) -> Bool) async throws {
        if isReady && predicate(mirror) { return }
        let id = nextWaiterID()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.suspend(id: id, predicate) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BlueZError.timedOut(what)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func suspend(id: UInt64, _ predicate: @escaping @Sendable (Mirror) -> Bool) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    c.resume(throwing: CancellationError())
                } else if isReady && predicate(mirror) {
                    c.resume()
                } else {
                    waiters.append(Waiter(id: id, predicate: predicate, continuation: c))
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Resumes every waiter whose condition now holds.
    func resumeWaiters() {
        guard isReady, !waiters.isEmpty else { return }
        let current = mirror
        var keep: [Waiter] = []
        for w in waiters {
            if w.predicate(current) { w.continuation.resume() } else { keep.append(w) }
        }
        waiters = keep
    }
}
