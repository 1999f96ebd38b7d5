import DBus
import Synchronization

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
    /// not be registered with again. Then finishes `buffer`.
    ///
    /// The bus routes messages in order, so when relinkd's departure is
    /// seen every Event it sent before is already buffered: ending the
    /// subscription then still hands those out.
    ///
    /// While `buffer` is full (the program fell behind) live events are
    /// not buffered; a second task fetches them from relinkd's store once
    /// the program made room (``RelinkEvents``).
    func run(signals: RelinkEventSignals, owners: NameOwnerChanges, progress: RelinkEventProgress,
             to buffer: RelinkEventBuffer, onReattach: @escaping @Sendable (RelinkRestoredState) async -> Void) async {
        let (behind, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await watch(owners, onReattach: onReattach)
                signals.cancel()
            }
            group.addTask { [self] in await catchUp(progress, buffer, wake: behind) }
            do {
                signalsLoop: for try await (from, event) in signals where from == path {
                    guard progress.admit(event.sequence) else { continue }
                    switch buffer.offer(event) {
                    case .taken: progress.delivered(event.sequence)
                    case .full:
                        progress.fellBehind(at: event.sequence)
                        wake.yield()
                    case .finished: break signalsLoop
                    }
                }
            } catch {}
            owners.cancel()
            wake.finish()
            buffer.finish()  // also ends the catch-up's wait for room
            group.cancelAll()
        }
    }

    /// While behind: once the program made room, fetches the events after
    /// the last one handed out from relinkd's store and hands them out,
    /// until it has them all (then live events are buffered again).
    private func catchUp(_ progress: RelinkEventProgress, _ buffer: RelinkEventBuffer, wake: AsyncStream<Void>) async {
        for await _ in wake {
            while progress.isBehind, !Task.isCancelled {
                await buffer.waitForRoom()
                let page: [RelinkClientEvent]
                do {
                    page = try await manager.events(identifier, after: progress.last,
                                                    max: UInt32(min(buffer.limit / 2 + 1, Int(RelinkArguments.maximumEvents))))
                } catch {
                    // relinkd unreachable for now (restarting): try again.
                    try? await Task.sleep(for: .milliseconds(200))
                    continue
                }
                offering: do {
                    for event in page where event.sequence > progress.last {
                        switch buffer.offer(event) {
                        case .taken: progress.delivered(event.sequence)
                        case .full: break offering  // still behind: wait for room again
                        case .finished: return
                        }
                    }
                    progress.caughtUp(storeEmpty: page.isEmpty)
                }
            }
        }
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

/// Where a central's event pump stands: the last sequence handed out, and
/// whether the program fell behind (the buffer was full) and which live
/// events it has missed since.
final class RelinkEventProgress: Sendable {
    private struct State {
        var last: UInt64
        var behind = false
        var latest: UInt64 = 0
        var episodes = 0
    }

    private let state: Mutex<State>

    /// Nothing handed out after `after` (the acknowledged sequence).
    init(after: UInt64) { state = Mutex(State(last: after)) }

    /// The last sequence handed out.
    var last: UInt64 { state.withLock { $0.last } }
    /// Whether live events are being left to the catch-up.
    var isBehind: Bool { state.withLock { $0.behind } }
    /// How many times the buffer was found full.
    var episodes: Int { state.withLock { $0.episodes } }

    /// Whether a live event is to be offered: new, and not while behind
    /// (then it is noted as missed).
    func admit(_ sequence: UInt64) -> Bool {
        state.withLock { s in
            guard sequence > s.last else { return false }
            if s.behind {
                s.latest = max(s.latest, sequence)
                return false
            }
            return true
        }
    }

    /// `sequence` was handed out.
    func delivered(_ sequence: UInt64) { state.withLock { $0.last = max($0.last, sequence) } }

    /// The buffer was full when live event `sequence` came.
    func fellBehind(at sequence: UInt64) {
        state.withLock { s in
            if !s.behind { s.episodes += 1 }
            s.behind = true
            s.latest = max(s.latest, sequence)
        }
    }

    /// A fetched page was handed out whole: caught up when every live event
    /// missed is handed out, or relinkd holds nothing more.
    func caughtUp(storeEmpty: Bool) {
        state.withLock { s in
            if storeEmpty || s.last >= s.latest {
                s.behind = false
                s.last = max(s.last, s.latest)
            }
        }
    }
}
