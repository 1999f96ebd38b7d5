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
            /// The sequences `Central1.Ack` was called with, answered or not.
            let acknowledgements = Mutex<[UInt64]>([])
        }

        let store = Store()
        private let serving: Task<Void, Never>

        /// - Parameter answersAcknowledge: false for a relinkd that dies
        ///   before it answers an `Ack` (the call stays unanswered).
        init(bus: String, answersAcknowledge: Bool = true) async throws {
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
                DBusMethod("Ack", in: [DBusArgument("through", .uint64)]) { call in
                    let through = try call.decode(UInt64.self)
                    store.acknowledgements.withLock { $0.append(through) }
                    // Never answered, even when the serving task is cancelled
                    // (a cancelled handler would answer "cancelled").
                    if !answersAcknowledge { await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in } }
                    return []
                },
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
            // Queued behind a stand-in that is still leaving (its close is
            // asynchronous): the name passes to this one when it is gone.
            _ = try await server.requestName("org.relink", flags: [])
        }

        func emit(_ path: String, _ sequence: UInt64) throws {
            guard let client = callers.last else { throw DBusError(.failed, "nobody registered") }
            if path == CentralPumpTests.centralPath { store.events.withLock { $0.append((sequence, "future-kind")) } }
            try server.emitSignal(path: try ObjectPath(path), interface: "org.relink.Central1", member: "Event",
                                  arguments: [.uint64(sequence), .string("future-kind"), .string("{}")], destination: client)
        }

        /// Leaves the bus as a killed relinkd does: the connection closes
        /// first, so that a call still being handled is never answered.
        func stop() {
            server.close()
            serving.cancel()
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

    /// A program acknowledges after each event; relinkd killed while an
    /// `Acknowledge` is in flight must not end the program's event loop:
    /// the call goes to the relinkd that comes back, once the central has
    /// registered with it. Without `reattach` the cut call fails as before.
    @Test(.timeLimit(.minutes(1))) func anAcknowledgeCutByRelinkdsDeathIsSentAgainToTheNextRelinkd() async throws {
        let bench = try await Bench.start()
        do {
            let dying = try await FakeRelinkd(bus: bench.busAddress, answersAcknowledge: false)
            let central = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress))
            _ = try await central.connect()
            let acknowledging = Task { try await central.acknowledge(through: 4) }
            try await eventually(timeout: .seconds(10), "the Acknowledge to reach relinkd") {
                dying.store.acknowledgements.withLock { $0 } == [4]
            }
            dying.stop()  // relinkd gone, the call unanswered: the bus answers NoReply
            let next = try await FakeRelinkd(bus: bench.busAddress)
            defer { next.stop() }
            try await acknowledging.value
            #expect(next.store.acknowledgements.withLock { $0 } == [4])
            #expect(await central.reattachments == 1)
            await central.close()

            // Without reattach: the cut call's error, typed as unreachable.
            next.stop()
            let dyingAgain = try await FakeRelinkd(bus: bench.busAddress, answersAcknowledge: false)
            try await eventually(timeout: .seconds(10), "the second stand-in to own org.relink") {
                (try? await dyingAgain.server.nameOwner(of: "org.relink")) == dyingAgain.server.uniqueName
            }
            let plain = RelinkCentral(restoreIdentifier: "front-door", bus: .address(bench.busAddress), reattach: false)
            _ = try await plain.connect()
            let failing = Task { try await plain.acknowledge(through: 4) }
            try await eventually(timeout: .seconds(10), "the second Acknowledge to reach relinkd") {
                dyingAgain.store.acknowledgements.withLock { $0 } == [4]
            }
            dyingAgain.stop()
            do {
                try await failing.value
                Issue.record("an Acknowledge nobody answered succeeded")
            } catch let error as RelinkClientError {
                #expect(error.isUnreachable, "\(error)")
            }
            await plain.close()
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
