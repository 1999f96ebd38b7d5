import DBus
import RelinkAPI

/// Signals from relinkd received by one connection, each decoded into an
/// `Element` (signals that do not decode are skipped). In bus order.
public struct RelinkSignals<Element: Sendable>: AsyncSequence, Sendable {
    let signals: SignalStream
    let decode: @Sendable (Message) -> Element?

    /// Decodes signals one by one from the underlying signal stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: SignalStream.AsyncIterator
        let decode: @Sendable (Message) -> Element?

        /// The next decoded signal; nil when the subscription ended.
        /// - Throws: ``RelinkClientError`` (unreachable) when the connection closed.
        public mutating func next() async throws -> Element? {
            do {
                while let m = try await base.next() {
                    if let element = decode(m) { return element }
                }
                return nil
            } catch {
                throw RelinkClientError.from(error)
            }
        }
    }

    /// The iterator; iterate once (signals are consumed, not replayed).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator(), decode: decode) }

    /// Ends the subscription.
    public func cancel() { signals.cancel() }
}

/// `Central1.Event` signals, each with the object path it came from (so
/// one stream can serve several identifiers).
public typealias RelinkEventSignals = RelinkSignals<(path: String, event: RelinkClientEvent)>

/// The `Central1` objects relinkd removed that one connection may see
/// (`ObjectManager.InterfacesRemoved` on `/org/relink`), by path: each an
/// identifier unregistered, by its program or another (`relinkctl forget`).
public typealias RelinkRemovedCentrals = RelinkSignals<String>

extension RelinkSignals where Element == (path: String, event: RelinkClientEvent) {
    /// `Event(t sequence, s kind, s payload)` signals.
    init(events signals: SignalStream) {
        self.init(signals: signals) { m in
            guard let path = m.path, let (seq, kind, payload) = try? m.decode(UInt64.self, String.self, String.self) else { return nil }
            return (path.rawValue, RelinkClientEvent(sequence: seq, kind: kind, payloadJSON: payload))
        }
    }
}

extension RelinkSignals where Element == String {
    /// `InterfacesRemoved(o object, as interfaces)` signals naming `Central1`.
    init(removedCentrals signals: SignalStream) {
        self.init(signals: signals) { m in
            guard let (path, interfaces) = try? m.decode(ObjectPath.self, [String].self),
                  interfaces.contains(RelinkNames.central) else { return nil }
            return path.rawValue
        }
    }
}
