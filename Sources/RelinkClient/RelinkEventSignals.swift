import DBus

/// `Central1.Event` signals received by one connection, decoded, with the
/// object path they came from (so one stream can serve several
/// identifiers). In bus order.
public struct RelinkEventSignals: AsyncSequence, Sendable {
    /// One event and the `Central1` object path (the identifier) it came from.
    public typealias Element = (path: String, event: RelinkClientEvent)
    let signals: SignalStream

    /// Decodes `Event` signals one by one from the underlying signal stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: SignalStream.AsyncIterator

        /// The next event; nil when the subscription ended. Signals with
        /// another signature are skipped.
        /// - Throws: ``RelinkClientError`` (unreachable) when the connection closed.
        public mutating func next() async throws -> Element? {
            do {
                while let m = try await base.next() {
                    guard let path = m.path, let (seq, kind, payload) = try? m.decode(UInt64.self, String.self, String.self) else { continue }
                    return (path.rawValue, RelinkClientEvent(sequence: seq, kind: kind, payloadJSON: payload))
                }
                return nil
            } catch {
                throw RelinkClientError.from(error)
            }
        }
    }

    /// The iterator; iterate once (events are consumed, not replayed).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator()) }

    /// Ends the subscription.
    public func cancel() { signals.cancel() }
}
