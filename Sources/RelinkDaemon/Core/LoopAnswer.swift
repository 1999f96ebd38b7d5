import Synchronization

/// One answer from the daemon's loop that the asker may stop waiting for:
/// ``wait(asking:)`` returns nil at once when the asking task is cancelled
/// (or the loop has stopped), even though the loop has not come to the
/// question yet. The loop answers with ``answer(_:)``; whichever comes first
/// resumes the asker, exactly once.
///
/// The liveness probe asks this way: the watchdog cancels a probe that took
/// longer than its period, and at shutdown (``Systemd/LivenessProbe``); a
/// probe that waited for a busy or not yet started loop regardless held
/// relinkd's graceful shutdown for as long.
final class LoopAnswer<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Value?, Never>)
        case done
    }

    private let state = Mutex<State>(.idle)

    /// The loop's answer (ignored when the asker has gone).
    func answer(_ value: Value) { finish(value) }

    /// Asks the loop (`ask` hands this to the loop's inbox and returns
    /// false when the inbox is closed) and waits for the answer; nil when
    /// cancelled or when the loop has stopped.
    func wait(asking ask: (LoopAnswer<Value>) -> Bool) async -> Value? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let cancelledAlready = state.withLock { state -> Bool in
                    guard case .idle = state else { return true }
                    state = .waiting(continuation)
                    return false
                }
                if cancelledAlready {
                    continuation.resume(returning: nil)
                } else if !ask(self) {
                    finish(nil)
                }
            }
        } onCancel: {
            finish(nil)
        }
    }

    private func finish(_ value: Value?) {
        let continuation = state.withLock { state -> CheckedContinuation<Value?, Never>? in
            defer { state = .done }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(returning: value)
    }
}
