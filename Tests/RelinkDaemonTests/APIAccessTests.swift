import BenchSupport
import DBus
import Foundation
import Logging
import RelinkDaemon
import RelinkStore
import Synchronization
import Testing
import RelinkModel

/// Access per Unix user, with relinkd's service run in this process and the
/// caller's user injected (every process here is root, so the bus alone
/// cannot play a second user; the e2e tests do that with real UIDs).
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIAccessTests {
    static let otherUID: UInt32 = 1000

    /// Runs relinkd's service in-process on a fresh bench; `users` maps
    /// unique names to the UID relinkd should believe they have.
    final class Users: Sendable {
        let map = Mutex<[String: UInt32]>([:])
        func set(_ name: String, _ uid: UInt32) { map.withLock { $0[name] = uid } }
        func uid(_ name: String) -> UInt32? { map.withLock { $0[name] } }
    }

    static func withService(_ body: (Bench, Users) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relink-api-access-\(UUID().uuidString)").path
        let bench = try await Bench.start()
        do {
            let users = Users()
            let identity = CallerIdentity { connection, name in
                if let uid = users.uid(name) { return uid }
                return try await connection.unixUser(of: name)
            }
            var logger = Logger(label: "relinkd-test")
            logger.logLevel = .warning
            let store = try RelinkStore(directory: directory, logger: logger)
            let connection = try await Connection.connect(to: .address(bench.busAddress))
            let service = try await RelinkService(connection: connection, store: store, adapter: "hci0", logger: logger, identity: identity)
            let task = Task { try await service.run() }
            defer { task.cancel() }
            try await body(bench, users)
            task.cancel()
            _ = await task.result
        } catch {
            await bench.stop()
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        await bench.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func expectError(_ name: String, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> Void) async {
        do {
            try await call()
            Issue.record("accepted; expected \(name)", sourceLocation: sourceLocation)
        } catch let error as DBusError {
            #expect(error.name.rawValue == name, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func anotherUserCanNeitherSeeNorChangeAnIdentifier() async throws {
        try await Self.withService { bench, users in
            let root = try await APIClient.connect(bench.busAddress)
            let other = try await APIClient.connect(bench.busAddress)
            defer { root.close(); other.close() }
            users.set(other.connection.uniqueName, Self.otherUID)
            try await eventually(timeout: .seconds(20), "relinkd to answer") {
                (try? await root.call(APIClient.manager, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Manager1"), .string("Ready")]))?.body == [.variant(.boolean(true))]
            }
            let (central, _, _) = try await root.register(Harness.id)
            let peripheral = try await root.central(central, "Connect", [
                .string(Harness.lockAddress), APIClient.options(["services": .array(.string, [.string(Harness.lockService)])]),
            ]).decode(ObjectPath.self)

            // The other user: the identifier does not exist for it.
            await expectError("org.relink.Error.NotPermitted") { _ = try await other.register(Harness.id) }
            // The refusal says the name is taken, never that another user holds it (issue 39).
            do { _ = try await other.register(Harness.id) } catch let error as DBusError {
                #expect(!error.message.contains("user") && error.message.contains("taken"), "\(error.message)")
            }
            for (method, args): (String, [DBusValue]) in [
                ("StopScan", []), ("Events", [.uint64(0), .uint32(10)]), ("Ack", [.uint64(0)]), ("Watch", [.uint64(0)]),
                ("Cancel", [.string(Harness.lockAddress)]), ("Connect", [.string(Harness.lockAddress), APIClient.options()]),
            ] {
                // As for a path with no identifier behind it.
                await expectError("org.freedesktop.DBus.Error.UnknownObject") { try await other.central(central, method, args) }
            }
            await expectError("org.freedesktop.DBus.Error.UnknownObject") { try await other.central(central, "Ack", [.string("wrong type")]) }
            await expectError("org.relink.Error.UnknownIdentifier") {
                try await other.call(APIClient.manager, "org.relink.Manager1", "Unregister", [.string(Harness.id)])
            }
            let list = try await other.call(APIClient.manager, "org.relink.Manager1", "ListIdentifiers").decode([DBusValue].self)
            #expect(list.isEmpty)
            for path in [central, peripheral] {
                await expectError("org.freedesktop.DBus.Error.UnknownObject") {
                    try await other.call(path, "org.freedesktop.DBus.Properties", "GetAll", [.string("org.relink.Central1")])
                }
                await expectError("org.freedesktop.DBus.Error.UnknownObject") {
                    try await other.call(path, "org.freedesktop.DBus.Introspectable", "Introspect")
                }
            }
            let managed = try await other.call(APIClient.manager, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
                .decode([ObjectPath: [String: [String: DBusValue]]].self)
            #expect(!managed.keys.contains(central) && !managed.keys.contains(peripheral), "\(managed.keys)")
            #expect(!managed.keys.contains { $0.rawValue.hasPrefix("/org/relink/control") || $0.rawValue.hasPrefix("/org/relink/autoconnect") })
            let status = try await other.call(APIClient.manager, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Manager1"), .string("Status")])
            #expect(!"\(status.body)".contains(Harness.id))
            // Control1 is for root and relinkd's own user: for others it does not exist.
            await expectError("org.freedesktop.DBus.Error.UnknownObject") {
                try await other.call(try ObjectPath("/org/relink/control"), "org.relink.Control1", "Status")
            }

            // Its own identifier works, and root sees both.
            let (own, restored, _) = try await other.register("org.example.other")
            #expect(restored["new"] == .boolean(true))
            let owner = try await other.call(own, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Central1"), .string("Owner")])
            #expect(owner.body == [.variant(.uint32(Self.otherUID))])
            #expect(try await other.call(APIClient.manager, "org.relink.Manager1", "ListIdentifiers").decode([DBusValue].self).count == 1)
            #expect(try await root.call(APIClient.manager, "org.relink.Manager1", "ListIdentifiers").decode([DBusValue].self).count == 2)
            // Once its own identifier wants the lock, the other user sees the peripheral (and is told).
            let added = try await other.connection.signals(matching: SignalMatch(
                sender: "org.relink", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
            var addedIterator = added.makeAsyncIterator()
            let same = try await other.central(own, "Connect", [.string(Harness.lockAddress), APIClient.options()]).decode(ObjectPath.self)
            #expect(same == peripheral)
            let announcement = try #require(try await addedIterator.next())
            #expect(announcement.body.first == .objectPath(peripheral))
            let seen = try await other.call(peripheral, "org.freedesktop.DBus.Properties", "Get", [.string("org.relink.Peripheral1"), .string("Address")])
            #expect(seen.body == [.variant(.string(Harness.lockAddress))])
            let rootManaged = try await root.call(APIClient.manager, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
                .decode([ObjectPath: [String: [String: DBusValue]]].self)
            #expect(rootManaged.keys.contains(central) && rootManaged.keys.contains(own) && rootManaged.keys.contains(peripheral))
        }
    }
}
