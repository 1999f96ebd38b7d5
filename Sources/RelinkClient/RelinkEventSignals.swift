import DBus

/// `Central1.Event` signals received by one connection, decoded, with the
/// object path they came from (so one stream can serve several
/// identifiers). In bus order.
public struct RelinkEventSignals: AsyncSequence, Sendable {
    public typealias Element = (path: String, event: RelinkClientEvent)
    let signals: SignalStream

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

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator()) }

    /// Ends the subscription.
    public func cancel() { signals.cancel() }
}
