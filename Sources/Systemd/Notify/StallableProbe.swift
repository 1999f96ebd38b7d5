import Synchronization

/// A test hook around another probe: while stalled, ``check()`` hangs (as a
/// blocked event loop would) until ``resume()`` or until the caller is
/// cancelled, then reports failure.
///
/// The daemon wraps its event-loop probe in one so a test (or an operator, in a
/// debug build) can make the watchdog pings stop without really hanging relinkd.
public final class StallableProbe: LivenessProbe {
    private struct State {
        var stalled = false
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelledBeforeWaiting: Set<UInt64> = []
    }

    private let base: any LivenessProbe
    private let state = Mutex(State())

    public init(wrapping base: any LivenessProbe) {
        self.base = base
    }

    /// Whether checks currently hang.
    public var isStalled: Bool {
        state.withLock { $0.stalled }
    }

    /// Makes every following check hang until ``resume()``.
    public func stall() {
        state.withLock { $0.stalled = true }
    }

    /// Lets checks through again; checks hanging now report failure (they were
    /// stalled past the moment they were asked).
    public func resume() {
        let waiting = state.withLock { state in
            state.stalled = false
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    public func check() async -> Bool {
        guard isStalled else { return await base.check() }
        await waitWhileStalled()
        return false
    }

    private func waitWhileStalled() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if !state.stalled || state.cancelledBeforeWaiting.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                if let waiting = state.waiters.removeValue(forKey: id) { return Optional(waiting) }
                state.cancelledBeforeWaiting.insert(id)
                return nil
            }
            continuation?.resume()
        }
        // A cancellation that raced with resume() leaves a stale marker: drop it.
        state.withLock { _ = $0.cancelledBeforeWaiting.remove(id) }
    }
}
