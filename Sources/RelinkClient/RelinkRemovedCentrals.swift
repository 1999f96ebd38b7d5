import DBus
import RelinkAPI

/// The `Central1` objects relinkd removed that one connection may see
/// (`ObjectManager.InterfacesRemoved` on `/org/relink`): each an
/// identifier unregistered, by its program or another (`relinkctl
/// forget`). In bus order, after every `Event` relinkd sent before.
public struct RelinkRemovedCentrals: AsyncSequence, Sendable {
    /// The removed object's path (`/org/relink/central/...`).
    public typealias Element = String
    let signals: SignalStream

    /// Yields the paths of removed `Central1` objects, skipping other objects.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: SignalStream.AsyncIterator

        /// The next removed `Central1` object; nil when the subscription ended.
        /// - Throws: ``RelinkClientError`` (unreachable) when the connection closed.
        public mutating func next() async throws -> String? {
            do {
                while let m = try await base.next() {
                    guard let (path, interfaces) = try? m.decode(ObjectPath.self, [String].self),
                          interfaces.contains(RelinkNames.central) else { continue }
                    return path.rawValue
                }
                return nil
            } catch {
                throw RelinkClientError.from(error)
            }
        }
    }

    /// The iterator; iterate once.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator()) }

    /// Ends the subscription.
    public func cancel() { signals.cancel() }
}
