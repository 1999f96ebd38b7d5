import Synchronization

/// Signals matching one rule, in bus order. See ``Connection/signals(matching:)``.
public struct SignalStream: AsyncSequence, Sendable {
    /// Each element is one received signal.
    public typealias Element = Message
    let stream: AsyncThrowingStream<[Message], any Error>
    let loop: ConnectionLoop
    let id: UInt64
    let backlog: ConnectionLoop.Backlog

    /// How many received signals wait in this subscription's buffer (not yet
    /// returned by `next()`). The buffer is unbounded; watch this to detect
    /// a consumer that cannot keep up.
    public var pending: Int { backlog.count.load(ordering: .relaxed) }

    /// Hands out the signals of the batches the I/O thread delivers, one
    /// at a time, and keeps ``pending`` up to date.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[Message], any Error>.AsyncIterator
        let backlog: ConnectionLoop.Backlog
        var batch: [Message] = []
        var index = 0
        /// Whether the signal last returned is still being handled (it is
        /// until `next()` is called again; see ``ConnectionLoop/Backlog``).
        var owed = false

        /// The next signal; nil when the task is cancelled or the
        /// subscription was cancelled.
        /// - Throws: ``DBusError`` (`Disconnected`) when the connection closed.
        public mutating func next() async throws -> Message? {
            if owed {
                owed = false
                backlog.unfinished.subtract(1, ordering: .sequentiallyConsistent)
            }
            if index < batch.count {
                defer { index += 1 }
                owed = true
                backlog.count.subtract(1, ordering: .relaxed)
                return batch[index]
            }
            guard let next = try await base.next() else { return nil }
            batch = next
            index = 1
            owed = true
            backlog.count.subtract(1, ordering: .relaxed)
            return next.first
        }
    }

    /// The iterator; iterate once (the signals are consumed, not replayed).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), backlog: backlog) }

    /// Ends the subscription now (the bus rule is removed).
    public func cancel() { loop.removeSubscriber(id) }
}

/// A change of owner of a bus name.
public struct NameOwnerChange: Sendable, Hashable {
    /// The bus name whose owner changed (well-known or unique).
    public var name: String
    /// nil when the name had no owner.
    public var oldOwner: String?
    /// nil when the name is now released.
    public var newOwner: String?
}

/// `NameOwnerChanged` signals, decoded. See ``Connection/nameOwnerChanges(for:)``.
public struct NameOwnerChanges: AsyncSequence, Sendable {
    /// Each element is one decoded `NameOwnerChanged`.
    public typealias Element = NameOwnerChange
    let signals: SignalStream

    /// Decodes the signals of the underlying ``SignalStream``, skipping
    /// any whose body is not three strings.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: SignalStream.AsyncIterator
        /// The next change; nil when the subscription ends.
        /// - Throws: ``DBusError`` (`Disconnected`).
        public mutating func next() async throws -> NameOwnerChange? {
            while let m = try await base.next() {
                guard let (name, old, new) = try? m.decode(String.self, String.self, String.self) else { continue }
                return NameOwnerChange(name: name, oldOwner: old.isEmpty ? nil : old, newOwner: new.isEmpty ? nil : new)
            }
            return nil
        }
    }

    /// The iterator; iterate once (changes are consumed, not replayed).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator()) }

    /// Ends the subscription now.
    public func cancel() { signals.cancel() }
}
