import BenchSupport
import DBus
import Foundation
import Synchronization
import Testing

/// The adapter's state through relinkd's real D-Bus API on the bench
/// (docs/api/Manager1.md, "Adapter state"): the central adapter powered off
/// and on, bluetoothd killed and back; each change an `adapter-state`
/// event to every identifier, `Manager1.AdapterState` and its broadcast
/// `PropertiesChanged`, `Register`'s restored state; the lock back after.
@Suite(.serialized, .timeLimit(.minutes(3))) struct AdapterStateAPITests {
    static let watcher = "org.example.watcher"
    static let allRoles: DBusValue = .array(.string, [.string("central"), .string("peripheral"), .string("central-peripheral")])

    /// The states of the `adapter-state` events the client got on `central`, in order.
    static func states(_ client: APIClient, _ central: ObjectPath) -> [String] {
        client.events.filter { $0.path == central.rawValue && $0.kind == "adapter-state" }.compactMap { event in
            let object = try? JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any]
            return (object?["adapterState"] as? [String: Any])?["state"] as? String
        }
    }

    /// `Manager1.AdapterState` now.
    static func property(_ client: APIClient, _ name: String) async throws -> DBusValue {
        let reply = try await client.call(APIClient.manager, "org.freedesktop.DBus.Properties", "Get",
                                          [.string("org.relink.Manager1"), .string(name)])
        return try reply.decode(DBusValue.self).unwrapped
    }

    /// Collects the `AdapterState` values of Manager1's `PropertiesChanged`
    /// signals (broadcast: a plain match rule sees them).
    final class PropertyWatch: Sendable {
        private let received = Mutex<[String]>([])
        private let task = Mutex<Task<Void, Never>?>(nil)

        /// The `AdapterState` values seen, in order.
        var states: [String] { received.withLock { $0 } }

        static func start(_ connection: Connection) async throws -> PropertyWatch {
            let watch = PropertyWatch()
            let stream = try await connection.signals(matching: SignalMatch(
                sender: "org.relink", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: APIClient.manager))
            let task = Task { [weak watch] in
                do {
                    for try await message in stream {
                        guard let (_, changed, _) = try? message.decode(String.self, [String: DBusValue].self, [String].self),
                              case .string(let state)? = changed["AdapterState"]?.unwrapped else { continue }
                        watch?.received.withLock { $0.append(state) }
                    }
                } catch {}
            }
            watch.task.withLock { $0 = task }
            return watch
        }

        func stop() { task.withLock { $0?.cancel() } }
    }

    @Test func adapterOffAndOnAreToldToEveryIdentifierAndTheLockComesBack() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let watch = try await PropertyWatch.start(client.connection)
            defer { watch.stop() }
            let (lock, restored, _) = try await client.register(Harness.id)
            #expect(restored["adapter_state"] == .string("poweredOn"))
            #expect(restored["adapter_roles"] == Self.allRoles)
            #expect(try await Self.property(client, "AdapterState") == .string("poweredOn"))
            #expect(try await Self.property(client, "AdapterRoles") == Self.allRoles)
            try await client.connectLock(lock, subscribe: true)
            let (watcher, _, _) = try await client.register(Self.watcher)
            try await eventually(timeout: .seconds(30), "the lock connected") {
                client.events.contains { $0.path == lock.rawValue && $0.kind == "connected" }
            }

            try await h.bench.centralPower(false)
            try await eventually(timeout: .seconds(30), "both identifiers told the adapter is off") {
                Self.states(client, lock) == ["poweredOff"] && Self.states(client, watcher) == ["poweredOff"]
            }
            #expect(try await Self.property(client, "AdapterState") == .string("poweredOff"))
            try await eventually(timeout: .seconds(10), "PropertiesChanged says it") { watch.states == ["poweredOff"] }
            let again = try await APIClient.connect(h.bench.busAddress)
            defer { again.close() }
            #expect(try await again.register(Self.watcher, ["replay": .boolean(false)]).restored["adapter_state"] == .string("poweredOff"))

            let beforeOn = client.events.count
            try await h.bench.centralPower(true)
            try await eventually(timeout: .seconds(30), "both told it is on, and the lock connected again") {
                guard Self.states(client, lock) == ["poweredOff", "poweredOn"], Self.states(client, watcher) == ["poweredOff", "poweredOn"]
                else { return false }
                return client.events.dropFirst(beforeOn).contains { $0.path == lock.rawValue && $0.kind == "connected" }
            }
            let after = client.events.dropFirst(beforeOn).filter { $0.path == lock.rawValue }.map(\.kind)
            #expect(after.firstIndex(of: "adapter-state") ?? .max < after.firstIndex(of: "connected") ?? -1,
                    "the lock's connected comes after the adapter-state that says it is on: \(after)")
            #expect(try await Self.property(client, "AdapterState") == .string("poweredOn"))
            try await eventually(timeout: .seconds(10), "PropertiesChanged says it") { watch.states == ["poweredOff", "poweredOn"] }
        }
    }

    @Test func bluetoothdKilledIsBluetoothdMissingUntilItIsBack() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (lock, _, _) = try await client.register(Harness.id)
            try await client.connectLock(lock, subscribe: true)
            try await eventually(timeout: .seconds(30), "the lock connected") {
                client.events.contains { $0.path == lock.rawValue && $0.kind == "connected" }
            }
            let beforeRestart = client.events.count
            try await h.bench.restartBlueZ()
            try await eventually(timeout: .seconds(30), "told bluetoothd was gone, then the adapter on, and the lock connected") {
                let states = Self.states(client, lock)
                guard states.first == "bluetoothdMissing", states.last == "poweredOn" else { return false }
                return client.events.dropFirst(beforeRestart).contains { $0.path == lock.rawValue && $0.kind == "connected" }
            }
            #expect(try await Self.property(client, "AdapterState") == .string("poweredOn"))
        }
    }
}
