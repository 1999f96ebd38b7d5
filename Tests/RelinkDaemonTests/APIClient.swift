import BenchSupport
import DBus
import Foundation
import Synchronization
import RelinkModel

/// A client of relinkd's public API (org.relink.Manager1/Central1) for the
/// tests: its own bus connection, collecting the Event signals it receives.
final class APIClient: Sendable {
    struct Event: Sendable, Hashable {
        var serial: UInt32
        var path: String
        var sequence: UInt64
        var kind: String
        var payload: String
    }

    let connection: Connection
    private let received = Mutex<[Event]>([])
    private let collector: Mutex<Task<Void, Never>?> = Mutex(nil)
    static let manager = try! ObjectPath("/org/relink")

    private init(connection: Connection) { self.connection = connection }

    /// Connects to `bus` and starts collecting Event signals (the match rule
    /// is in place when this returns).
    static func connect(_ bus: String) async throws -> APIClient {
        let client = APIClient(connection: try await Connection.connect(to: .address(bus)))
        let stream = try await client.connection.signals(matching: SignalMatch(sender: "org.relink", interface: "org.relink.Central1", member: "Event"))
        let task = Task { [weak client] in
            do {
                for try await m in stream {
                    guard let (seq, kind, payload) = try? m.decode(UInt64.self, String.self, String.self) else { continue }
                    client?.received.withLock { $0.append(Event(serial: m.serial, path: m.path?.rawValue ?? "", sequence: seq, kind: kind, payload: payload)) }
                }
            } catch {}
        }
        client.collector.withLock { $0 = task }
        return client
    }

    var events: [Event] { received.withLock { $0 } }

    func close() {
        collector.withLock { $0?.cancel() }
        connection.close()
    }

    /// Calls a method of relinkd; returns the whole reply message.
    @discardableResult
    func call(_ path: ObjectPath, _ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws -> Message {
        try await connection.call(destination: "org.relink", path: path, interface: interface, method: method, arguments: arguments, timeout: .seconds(10))
    }

    static func options(_ entries: [String: DBusValue] = [:]) -> DBusValue {
        .dictionary(key: .string, value: .variant, entries.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value)) })
    }

    /// `Register`: the central's path, the restored state, and the reply's serial.
    func register(_ id: String, _ options: [String: DBusValue] = [:]) async throws -> (central: ObjectPath, restored: [String: DBusValue], serial: UInt32) {
        let reply = try await call(Self.manager, "org.relink.Manager1", "Register", [.string(id), Self.options(options)])
        let (path, restored) = try reply.decode(ObjectPath.self, [String: DBusValue].self)
        return (path, restored, reply.serial)
    }

    @discardableResult
    func central(_ path: ObjectPath, _ method: String, _ arguments: [DBusValue] = []) async throws -> Message {
        try await call(path, "org.relink.Central1", method, arguments)
    }

    /// `Connect` to the bench's lock (pending until cancelled), then, if
    /// asked, `Subscribe` to its lock state.
    func connectLock(_ central: ObjectPath, subscribe: Bool) async throws {
        try await self.central(central, "Connect", [
            .string(Harness.lockAddress), Self.options(["services": .array(.string, [.string(Harness.lockService)])]),
        ])
        guard subscribe else { return }
        try await self.central(central, "Subscribe", [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)])
    }

    /// Waits until at least `count` events arrived.
    func waitForEvents(_ count: Int, timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, "\(count) Event signals (have \(events.count))") { self.events.count >= count }
    }

    /// Watches for `window` that no Event beyond the first `count` arrives.
    /// A real-time wait (Tests/README.md): what a replay test asserts is
    /// that nothing comes twice or after the end, and only time shows that.
    func observeNoEventsBeyond(_ count: Int, for window: Duration = .milliseconds(300)) async throws {
        try await observeQuietly(for: window, "no Event beyond the first \(count) (have \(events.count))") { self.events.count <= count }
    }
}

extension DBusValue {
    /// The value inside a variant (or the value itself).
    var unwrapped: DBusValue { if case .variant(let v) = self { v.unwrapped } else { self } }
}
