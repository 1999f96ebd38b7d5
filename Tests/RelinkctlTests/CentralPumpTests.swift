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

    /// A stand-in relinkd: `Manager1.Register` for "front-door" only; counts registrations.
    final class FakeRelinkd: Sendable {
        /// The unique names that called Register, in order.
        final class Callers: Sendable {
            let names = Mutex<[String]>([])
            var count: Int { names.withLock { $0.count } }
            var distinct: Int { names.withLock { Set($0).count } }
            var last: String? { names.withLock { $0.last } }
        }

        let server: Connection
        let callers = Callers()
        /// The events "stored": every one emitted, served by `Central1.Events`.
        final class Store: Sendable {
            let events = Mutex<[(UInt64, String)]>([])
            let calls = Mutex(0)
        }

        let store = Store()
        private let serving: Task<Void, Never>

        init(bus: String) async throws {
            server = try await Connection.connect(to: .address(bus))
            let restored = CentralPumpTests.restored()
            let callers = self.callers
            let manager = DBusInterface("org.relink.Manager1", methods: [
                DBusMethod("Register", in: [DBusArgument("identifier", .string), DBusArgument("options", .dictionary(key: .string, value: .variant))],
                           out: [DBusArgument("central", .objectPath), DBusArgument("restored", .dictionary(key: .string, value: .variant))]) { call in
                    let (identifier, _) = try call.decode(String.self, [String: DBusValue].self)
                    guard identifier == "front-door" else { throw DBusError(.init("org.relink.Error.InvalidArguments"), "Bad identifier.") }
                    callers.names.withLock { $0.append(call.sender) }
                    return [.objectPath(try ObjectPath(CentralPumpTests.centralPath)), restored.dbusValue.unwrapped]
                },
            ])
            try server.export(try ExportedObject(path: try ObjectPath("/org/relink"), interfaces: [manager]))
            let store = self.store
            let central = DBusInterface("org.relink.Central1", methods: [
                DBusMethod("Events", in: [DBusArgument("after", .uint64), DBusArgument("max", .uint32)],
                           out: [DBusArgument("events", .array(.structure([.uint64, .string, .string])))]) { call in
                    let (after, max) = try call.decode(UInt64.self, UInt32.self)
                    store.calls.withLock { $0 += 1 }
                    let page = store.events.withLock { $0 }.filter { $0.0 > after }.prefix(Int(max))
                    return [.array(.structure([.uint64, .string, .string]),
                                   page.map { .structure([.uint64($0.0), .string($0.1), .string("{}")]) })]
                },
            ])
            try server.export(try ExportedObject(path: try ObjectPath(CentralPumpTests.centralPath), interfaces: [central]))
            let server = server
            serving = Task { try? await server.serve() }
            _ = try await server.requestName("org.relink")
        }

        func emit(_ path: String, _ sequence: UInt64) throws {
            guard let client = callers.last else { throw DBusError(.failed, "nobody registered") }
            if path == CentralPumpTests.centralPath { store.events.withLock { $0.append((sequence, "future-kind")) } }
            try server.emitSignal(path: try ObjectPath(path), interface: "org.relink.Central1", member: "Event",
                                  arguments: [.uint64(sequence), .string("future-kind"), .string("{}")], destination: client)
        }

        func stop() {
            serving.cancel()
            server.close()
        }
    }

    @Test(.timeLimit(.minutes(1))) func onlyNewEventsOfItsIdentifierInOrderThenTheEndWhenRelinkdLeaves() async throws {
        let bench = try await Bench.start()
        do {
            let fake = try await FakeRelinkd(bus: bench.busAddress)
            defer { fake.stop() }
            let central = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress), reattach: false)
            let state = try await central.connect()
            #expect(state.acknowledged == 2 && state.lastSequence == 4)
            try fake.emit(Self.centralPath, 2)                            // acknowledged already
            try fake.emit(Self.centralPath, 3)
            try fake.emit("/org/relink/central/back_2ddoor", 4)           // another identifier
            try fake.emit(Self.centralPath, 3)                            // repeated
            try fake.emit(Self.centralPath, 4)
            try fake.emit(Self.centralPath, 6)                            // a gap (the bound dropped 5)
            _ = try await fake.server.releaseName("org.relink")

            var received: [UInt64] = []
            for await event in central.events { received.append(event.sequence) }
            #expect(received == [3, 4, 6])
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
    }

    @Test(.timeLimit(.minutes(1))) func aProgramThatFallsBehindGetsEveryEventOnceInOrderAndTheBufferStaysBounded() async throws {
        let bench = try await Bench.start()
        do {
            let fake = try await FakeRelinkd(bus: bench.busAddress)
            defer { fake.stop() }
            let central = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress), reattach: false, eventBuffer: 4)
            _ = try await central.connect()
            // 40 events while the program reads none: the buffer holds 4.
            for sequence in UInt64(3)...42 { try fake.emit(Self.centralPath, sequence) }
            // Sent is not received: wait until the pump has met a full buffer
            // before reading, or a loaded machine lets the reader keep pace.
            try await eventually(timeout: .seconds(10), "the central to fall behind") { await central.timesFellBehind >= 1 }
            var events = central.events.makeAsyncIterator()
            var received: [UInt64] = []
            while received.count < 40, let event = await events.next() { received.append(event.sequence) }
            #expect(received == Array(3...42))
            #expect(fake.store.calls.withLock { $0 } >= 1, "the missed events were not fetched from the store")
            // Caught up: live events are buffered again.
            try fake.emit(Self.centralPath, 43)
            #expect(await events.next()?.sequence == 43)
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
    }

    @Test(.timeLimit(.minutes(1))) func reattachesWhenRelinkdComesBackAndGoesOnWithoutRepeats() async throws {
        let bench = try await Bench.start()
        do {
            let fake = try await FakeRelinkd(bus: bench.busAddress)
            defer { fake.stop() }
            let central = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress))
            _ = try await central.connect()
            var events = central.events.makeAsyncIterator()
            try fake.emit(Self.centralPath, 3)
            #expect(await events.next()?.sequence == 3)
            // relinkd goes away and comes back: the central registers again by itself.
            _ = try await fake.server.releaseName("org.relink")
            _ = try await fake.server.requestName("org.relink")
            try await eventually(timeout: .seconds(10), "a second Register") { fake.callers.count == 2 }
            #expect(fake.callers.distinct == 1)
            try await eventually(timeout: .seconds(5), "the reattachment to be counted") { await central.reattachments == 1 }
            // The replay repeats 3 (not acknowledged): not handed out twice.
            try fake.emit(Self.centralPath, 3)
            try fake.emit(Self.centralPath, 4)
            #expect(await events.next()?.sequence == 4)
            await central.close()
            #expect(await events.next() == nil)
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
