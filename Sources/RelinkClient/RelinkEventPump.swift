import DBus

/// Feeds a ``RelinkCentral``'s `events` from the `Central1.Event` signals
/// of its connection: in bus order, only its identifier's, each sequence
/// number once (above the last handed out). One long-lived task, no task
/// per signal.
struct RelinkEventPump: Sendable {
    let manager: RelinkManager
    let identifier: String
    let options: RelinkRegisterOptions
    let path: String
    let reattach: Bool

    /// Runs until the subscription ends: the connection closed, the task
    /// was cancelled, or relinkd left the bus and (with `reattach`) could
    /// not be registered with again. Then finishes `continuation`.
    ///
    /// The bus routes messages in order, so when relinkd's departure is
    /// seen every Event it sent before is already buffered: ending the
    /// subscription then still hands those out.
    func run(signals: RelinkEventSignals, owners: NameOwnerChanges, after: UInt64,
             to continuation: AsyncStream<RelinkClientEvent>.Continuation,
             onReattach: @escaping @Sendable (RelinkRestoredState) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await watch(owners, onReattach: onReattach)
                signals.cancel()
            }
            var last = after
            do {
                for try await (from, event) in signals where from == path && event.sequence > last {
                    last = event.sequence
                    continuation.yield(event)
                }
            } catch {}
            owners.cancel()
            group.cancelAll()
        }
        continuation.finish()
    }

    /// Returns when relinkd left for good: without `reattach`, at its
    /// departure; with it, when registering again after its return failed.
    private func watch(_ owners: NameOwnerChanges, onReattach: @Sendable (RelinkRestoredState) async -> Void) async {
        do {
            for try await change in owners {
                if change.newOwner == nil {
                    if reattach { continue } else { return }
                }
                guard reattach, let state = await registerAgain() else { return }
                await onReattach(state)
            }
        } catch {}
    }

    /// `Register` again (relinkd replays what was not acknowledged); a few
    /// tries, as relinkd may own its name a moment before it answers.
    private func registerAgain() async -> RelinkRestoredState? {
        for attempt in 0..<5 {
            if attempt > 0 { try? await Task.sleep(for: .milliseconds(200 * attempt)) }
            if Task.isCancelled { return nil }
            if let (_, state) = try? await manager.register(identifier, options: options) { return state }
        }
        return nil
    }
}
