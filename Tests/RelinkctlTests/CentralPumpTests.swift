import BenchSupport
import DBus
import RelinkClient
import Synchronization
import Testing

/// RelinkCentral's handling of Event signals, against a stand-in for
/// relinkd on a real private bus (the bench's): signals a real relinkd
/// does not send on purpose (an event at or below `acknowledged`, a
/// repeated sequence, an event of another identifier) are not handed out,
/// and the stream finishes when `org.relink` leaves the bus.
@Suite struct CentralPumpTests {
    static let centralPath = "/org/relink/central/front_2ddoor"

    static func restored() -> [String: DBusValue] {
        [
            "new": .boolean(false), "peripherals": .array(.dictionary(key: .string, value: .variant), []),
            "scan_services": .array(.string, []),
            "scan_options": .dictionary(key: .string, value: .variant, [.init(.string("allow_duplicates"), .variant(.boolean(false)))]),
            "scanning": .boolean(false), "last_sequence": .uint64(4), "acknowledged": .uint64(2), "dropped_events": .uint64(0),
        ]
    }

    @Test func onlyNewEventsOfItsIdentifierInOrderThenTheEndWhenRelinkdLeaves() async throws {
        let bench = try await Bench.start()
        do {
            let server = try await Connection.connect(to: .address(bench.busAddress))
            let caller = Mutex<String?>(nil)
            let restored = Self.restored()
            let manager = DBusInterface("org.relink.Manager1", methods: [
                DBusMethod("Register", in: [DBusArgument("identifier", .string), DBusArgument("options", .dictionary(key: .string, value: .variant))],
                           out: [DBusArgument("central", .objectPath), DBusArgument("restored", .dictionary(key: .string, value: .variant))]) { call in
                    let (identifier, _) = try call.decode(String.self, [String: DBusValue].self)
                    guard identifier == "front-door" else { throw DBusError(.init("org.relink.Error.InvalidArguments"), "Bad identifier.") }
                    caller.withLock { $0 = call.sender }
                    return [.objectPath(try ObjectPath(Self.centralPath)), restored.dbusValue.unwrapped]
                },
            ])
            try server.export(try ExportedObject(path: try ObjectPath("/org/relink"), interfaces: [manager]))
            let serving = Task { try? await server.serve() }
            defer { serving.cancel() }
            _ = try await server.requestName("org.relink")

            let central = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress))
            let state = try await central.connect()
            #expect(state.acknowledged == 2 && state.lastSequence == 4)
            let client = try #require(caller.withLock { $0 })

            func emit(_ path: String, _ sequence: UInt64, _ kind: String = "future-kind") throws {
                try server.emitSignal(path: try ObjectPath(path), interface: "org.relink.Central1", member: "Event",
                                      arguments: [.uint64(sequence), .string(kind), .string("{}")], destination: client)
            }
            try emit(Self.centralPath, 2)                            // acknowledged already
            try emit(Self.centralPath, 3)
            try emit("/org/relink/central/back_2ddoor", 4)           // another identifier
            try emit(Self.centralPath, 3)                            // repeated
            try emit(Self.centralPath, 4)
            try emit(Self.centralPath, 6)                            // a gap (the bound dropped 5)
            _ = try await server.releaseName("org.relink")

            var received: [UInt64] = []
            for await event in central.events { received.append(event.sequence) }
            #expect(received == [3, 4, 6])
            server.close()
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
    }

    @Test func registerErrorsAreTypedAndNothingIsHandedOut() async throws {
        let bench = try await Bench.start()
        // Nobody owns org.relink: unreachable.
        let central = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress))
        do throws(RelinkClientError) {
            _ = try await central.connect()
            Issue.record("connect without relinkd succeeded")
        } catch {
            #expect(error.isUnreachable && !error.isUnknownObject, "\(error)")
        }
        // A bad identifier never reaches the bus.
        do throws(RelinkClientError) {
            _ = try await RelinkCentral(restoreIdentifier: "", bus: .address(bench.busAddress)).connect()
            Issue.record("empty identifier accepted")
        } catch {
            #expect(error.name == .invalidArguments)
        }
        // Calls before connect(): NotConnected.
        do throws(RelinkClientError) {
            try await central.stopScan()
            Issue.record("stopScan before connect succeeded")
        } catch {
            #expect(error.name == .notConnected)
        }
        await bench.stop()
    }
}
